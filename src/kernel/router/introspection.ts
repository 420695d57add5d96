import { executeSync, type DocumentNode } from 'graphql';
import type { GraphQLErrorJSON } from '../errors.js';
import type { JsonObject } from '../fetch/subgraph-types.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';

/** Answers `__schema` / `__type` root fields from the client-facing schema, locally. */
export function runIntrospection(graph: LoadedGraph, document: DocumentNode, variables: Readonly<Record<string, unknown>>, errors: GraphQLErrorJSON[]): JsonObject {
  const result = executeSync({ schema: graph.apiSchema, document, variableValues: { ...variables } });
  for (const error of result.errors ?? []) errors.push(error.toJSON() as GraphQLErrorJSON);
  return (result.data ?? {}) as JsonObject;
}
