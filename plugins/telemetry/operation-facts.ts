/**
 * What spans, metrics and access log lines say about an operation: its name,
 * its type and a hash of its text. Worked out once per parsed document (the
 * router caches documents by text, so a repeated operation costs a lookup).
 */

import { createHash } from 'node:crypto';
import { print, type DocumentNode, type OperationDefinitionNode } from 'graphql';

export type OperationType = 'query' | 'mutation' | 'subscription';

/** One operation of a document, as telemetry names it. */
export interface OperationFacts {
  /** The operation's name; undefined for an anonymous one (or none found). */
  readonly name: string | undefined;
  /** undefined when the document has no operation by that name. */
  readonly type: OperationType | undefined;
  /** SHA-256 (hex) of the operation text the router ran: the id a persisted query of it has. */
  readonly hash: string;
}

interface DocumentFacts {
  readonly hash: string;
  readonly operations: readonly OperationDefinitionNode[];
  /** Facts per requested operation name (`''` for none); a document holds few operations. */
  readonly byName: Map<string, OperationFacts>;
}

const documents = new WeakMap<DocumentNode, DocumentFacts>();

/** Facts of the operation `operationName` selects in `document` (the only one when no name is given). */
export function operationFacts(document: DocumentNode, operationName: string | undefined): OperationFacts {
  let facts = documents.get(document);
  if (!facts) {
    const text = document.loc?.source.body ?? print(document);
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    facts = { hash: createHash('sha256').update(text).digest('hex'), operations, byName: new Map() };
    documents.set(document, facts);
  }
  const key = operationName ?? '';
  let found = facts.byName.get(key);
  if (!found) {
    const operation =
      operationName === undefined || operationName === ''
        ? facts.operations.length === 1
          ? facts.operations[0]
          : undefined
        : facts.operations.find((o) => o.name?.value === operationName);
    found = {
      name: operation?.name?.value ?? (operationName === '' ? undefined : operationName),
      type: operation?.operation as OperationType | undefined,
      hash: facts.hash,
    };
    // Names come from clients: keep a bounded number per document.
    if (facts.byName.size < 16) facts.byName.set(key, found);
  }
  return found;
}
