/**
 * Batched entity calls (a plan node with `parts`): one request of aliased
 * `_entities` fields, part `i` under `_i` with its representations in
 * `$ri`. Parts without objects to look up are left out of the request;
 * plugins narrow a request the same way (`withEntityParts`), for example
 * the response cache sending only what it misses.
 */
import { Kind, parse, print } from 'graphql';
import type { EntityCallPart, JsonObject, SubgraphRequest } from '../fetch/subgraph-types.js';
import { batchOperation } from '../plan/batch-node.js';
import type { FetchNode } from '../plan/query-plan.js';
import { representationsVariableOf } from '../plan/representations-variable.js';
import { setOwn } from '../own-property.js';

/**
 * The request (the executor's call, or the fetch stage's input) with only
 * these parts, each with the representations it carries: operation text, variables and `representations` rebuilt. A part
 * keeps its alias and variable, so its answer is found where it would
 * have been in the whole request.
 */
export function withEntityParts<R extends Omit<SubgraphRequest, 'headers'>>(request: R, parts: readonly EntityCallPart[]): R {
  const { operation, selectionSet } = batchOperation(request.operationName, parts);
  const variables: Record<string, unknown> = {};
  const representations: JsonObject[] = [];
  for (const part of parts) {
    const own = representationsVariableOf(part);
    for (const name in part.variables) if (name !== own) setOwn(variables, name, part.variables[name]);
    variables[part.variable] = part.representations;
    for (const representation of part.representations) representations.push(representation);
  }
  return { ...request, query: operation, selectionSet, variables, representations, parts };
}

/** Client variable declarations of a batched node, by name: read once from its operation text. */
const declarations = new WeakMap<FetchNode, ReadonlyMap<string, string>>();

/** Declarations of the client variables one part of a batched node reads. */
export function partVariableDefinitions(batch: FetchNode, part: FetchNode): string[] {
  let byName = declarations.get(batch);
  if (!byName) {
    const definition = parse(batch.operation).definitions[0];
    const list = definition?.kind === Kind.OPERATION_DEFINITION ? (definition.variableDefinitions ?? []) : [];
    byName = new Map(list.map((d) => [d.variable.name.value, print(d)]));
    declarations.set(batch, byName);
  }
  const known = byName;
  return part.variableUsages.flatMap((name) => known.get(name) ?? []);
}

/** Which part of a batched answer a response key (`_3`) is; undefined for any other key. */
export function partIndexOf(key: unknown): number | undefined {
  return typeof key === 'string' && /^_\d+$/.test(key) ? Number(key.slice(1)) : undefined;
}
