/**
 * The operation text of a subgraph fetch, parsed once: its operation and
 * fragments. Plans are cached by the router, so the same texts come back.
 */
import { Kind, parse, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { LRUCache } from 'lru-cache';

/** A parsed fetch operation. */
export interface FetchDocument {
  readonly operation: OperationDefinitionNode;
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
}

/** Heap the parsed fetch texts may take, estimated. */
const MAX_BYTES = 64 * 1024 * 1024;

/** A parsed text's heap, roughly: the text itself and about 16 bytes of syntax tree per character (tokens of a few characters, each an AST node). */
function estimateBytes(text: string): number {
  return 64 + text.length * 18;
}

/** Parsed fetch texts by text and operation name (LRU). */
export class FetchDocuments {
  // Fetch texts can carry a client's literals (up to limits.max_request_body each): bounded by estimated heap too.
  private readonly cache = new LRUCache<string, FetchDocument>({ max: 1000, maxSize: MAX_BYTES, sizeCalculation: (_document, key) => estimateBytes(key) });

  /** Parses (or recalls) a fetch; throws an `Error` when the text holds no such operation. */
  get(query: string, operationName: string | undefined): FetchDocument {
    const key = `${operationName ?? ''}\u0000${query}`;
    let document = this.cache.get(key);
    if (!document) {
      document = read(query, operationName);
      this.cache.set(key, document);
    }
    return document;
  }
}

function read(query: string, operationName: string | undefined): FetchDocument {
  const parsed = parse(query, { noLocation: true });
  const fragments: Record<string, FragmentDefinitionNode> = {};
  const operations: OperationDefinitionNode[] = [];
  for (const definition of parsed.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
    else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition);
  }
  const operation =
    operationName === undefined ? operations[0] : (operations.find((o) => o.name?.value === operationName) ?? (operations.length === 1 ? operations[0] : undefined));
  if (!operation) throw new Error(`the fetch holds no operation${operationName ? ` named ${operationName}` : ''}`);
  return { operation, fragments };
}
