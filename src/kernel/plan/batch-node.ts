import { print } from 'graphql';
import type { NormalizedOperation } from './normalize.js';
import type { FetchNode } from './query-plan.js';

/** What the text of one part of a batched call is made from. */
export interface BatchPartText {
  /** Response key of the part's `_entities` field: `_0`, `_1`, ... */
  readonly alias: string;
  /** Variable holding the part's representations: `r0`, `r1`, ... (see `representationVariables`). */
  readonly variable: string;
  /** The part's selection under `_entities`, printed. */
  readonly selectionSet: string;
  /** Declarations of the client variables the part reads (`$first: Int`). */
  readonly variableDefinitions: readonly string[];
}

/**
 * Names of the variables holding each part's representations: `r0`, `r1`,
 * ..., each given `_` suffixes until it is not one of the client variables
 * the call declares (`taken`), so a client's own `$r0` keeps its value.
 */
export function representationVariables(count: number, taken: Iterable<string>): string[] {
  const used = new Set(taken);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    let name = `r${i}`;
    while (used.has(name)) name += '_';
    used.add(name);
    names.push(name);
  }
  return names;
}

/** The operation text and selection of a batched call of these parts (the plan's, or a subset of it). */
export function batchOperation(name: string | undefined, parts: readonly BatchPartText[]): { operation: string; selectionSet: string } {
  const fields = parts.map((part) => `${part.alias}: _entities(representations: $${part.variable}) ${part.selectionSet}`);
  const declared = [...parts.map((part) => `$${part.variable}: [_Any!]!`), ...new Set(parts.flatMap((part) => part.variableDefinitions))].join(', ');
  const selectionSet = `{ ${fields.join(' ')} }`;
  return { operation: `query${name ? ` ${name}` : ''}(${declared}) ${selectionSet}`, selectionSet };
}

/**
 * The plan node of a batched entity call (merge-fetches.ts,
 * `batchFetchGroups`): one request whose parts are aliased `_entities`
 * fields, part `i` answered under `_i` for the representations in `$ri`.
 * Each part is an ordinary entity fetch node, so the executor collects,
 * sends and reads it exactly as it would alone.
 */
export function batchFetchNode(parts: readonly FetchNode[], operation: NormalizedOperation): FetchNode {
  const first = parts[0]!;
  const definitions = new Map(operation.variableDefinitions.map((d) => [d.variable.name.value, print(d)]));
  const variables = representationVariables(
    parts.length,
    parts.flatMap((part) => part.variableUsages),
  );
  const texts = parts.map(
    (part, i): BatchPartText => ({
      alias: `_${i}`,
      variable: variables[i]!,
      selectionSet: part.selectionSet,
      variableDefinitions: part.variableUsages.map((name) => definitions.get(name)!).filter(Boolean),
    }),
  );
  const { operation: text, selectionSet } = batchOperation(first.operationName, texts);
  return {
    kind: 'Fetch',
    id: first.id,
    subgraph: first.subgraph,
    fetchKind: 'entity',
    operationType: 'query',
    operation: text,
    operationName: first.operationName,
    selectionSet,
    variableUsages: [...new Set(parts.flatMap((part) => part.variableUsages))],
    mergePath: first.mergePath,
    representations: undefined,
    parts,
  };
}
