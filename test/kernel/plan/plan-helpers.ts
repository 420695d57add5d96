import { parse } from 'graphql';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { FederationIndex } from '../../../src/kernel/graph/federation-index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { buildQueryPlan } from '../../../src/kernel/plan/build-plan.js';
import { printQueryPlan } from '../../../src/kernel/plan/print-plan.js';
import type { QueryPlan } from '../../../src/kernel/plan/query-plan.js';

/** A planner over subgraph SDLs composed in memory (no servers). */
export function plannerFor(subgraphs: ReadonlyArray<{ name: string; typeDefs: string }>) {
  const composed = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: `http://${s.name}.test/graphql`, sdl: s.typeDefs })));
  const index = new FederationIndex(readSupergraph(composed.supergraphSdl));
  const plan = (query: string, variables: Record<string, unknown> = {}, operationName?: string): QueryPlan => buildQueryPlan(index, parse(query), operationName, variables);
  return {
    index,
    supergraphSdl: composed.supergraphSdl,
    plan,
    print: (query: string, variables?: Record<string, unknown>) => printQueryPlan(plan(query, variables)),
  };
}
