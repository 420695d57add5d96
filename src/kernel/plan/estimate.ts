import type { SelectionSetNode } from 'graphql';
import type { FederationIndex } from '../graph/federation-index.js';
import { subFieldSet } from '../graph/field-set.js';
import type { NSelection } from './normalize.js';
import { providedFor } from './planner-support.js';

const MAX_DEPTH = 8;

/**
 * A cheap lower bound on the entity jumps needed to resolve `selections`
 * starting in `subgraph`: the planner uses it to choose between subgraphs
 * that can all serve a field (shareable root fields, several jump targets).
 */
export function estimateJumps(
  index: FederationIndex,
  subgraph: string,
  parentType: string,
  selections: readonly NSelection[],
  provided: SelectionSetNode | undefined,
  depth = 0,
): number {
  if (depth > MAX_DEPTH) return 0;
  let jumps = 0;
  const targets = new Set<string>();
  for (const selection of selections) {
    if (selection.kind === 'Fragment') {
      if (index.hasType(selection.typeCondition, subgraph)) {
        const forType = providedFor(index, provided, selection.typeCondition);
        jumps += estimateJumps(index, subgraph, selection.typeCondition, selection.selections, forType, depth + 1);
      }
      continue;
    }
    if (selection.name === '__typename') continue;
    const providedHere = provided ? subFieldSet(provided, selection.name) : undefined;
    const childType = index.fieldNamedType(parentType, selection.name);
    if (providedHere || index.canResolve(parentType, selection.name, subgraph)) {
      if (selection.selections) {
        const childProvided = providedHere?.selectionSet ?? index.fieldSource(parentType, selection.name, subgraph)?.provides;
        jumps += estimateJumps(index, subgraph, childType, selection.selections, childProvided, depth + 1);
      }
      continue;
    }
    let best: { subgraph: string; cost: number } | undefined;
    for (const candidate of index.subgraphNames()) {
      if (candidate === subgraph || !index.canResolve(parentType, selection.name, candidate)) continue;
      const cost = selection.selections ? estimateJumps(index, candidate, childType, selection.selections, undefined, depth + 1) : 0;
      if (!best || cost < best.cost) best = { subgraph: candidate, cost };
    }
    if (best) {
      targets.add(best.subgraph);
      jumps += best.cost;
    }
  }
  return jumps + targets.size;
}
