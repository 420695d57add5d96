import { representationVariables } from '../plan/batch-node.js';
import type { FetchNode, ParallelNode, PlanNode } from '../plan/query-plan.js';
import { representationsVariableOf } from '../plan/representations-variable.js';

/** Entity fetches of one parallel wave to one subgraph, sent as one request. */
export interface MergedFetch {
  readonly subgraph: string;
  readonly nodes: readonly FetchNode[];
  /** One aliased `_entities` field per node (`_e0`, `_e1`, ...), each with its own representations variable. */
  readonly operation: string;
  /** The representations variable of each node, in order (`r0`, ... clear of the client's variables). */
  readonly representationVariables: readonly string[];
  /** The merged selection (printed), for logs and plugins. */
  readonly selectionSet: string;
  readonly variableUsages: readonly string[];
}

/** What a Parallel node runs when multi-fetch is on: merged groups, and the nodes left as they are. */
export interface ParallelSchedule {
  readonly merged: readonly MergedFetch[];
  readonly rest: readonly PlanNode[];
}

const schedules = new WeakMap<ParallelNode, ParallelSchedule>();

/**
 * Groups the entity fetches of a Parallel node by subgraph; two or more to
 * the same subgraph become one request (`engine.enable_multi_fetch`).
 * Computed once per plan node.
 */
export function scheduleParallel(node: ParallelNode): ParallelSchedule {
  let schedule = schedules.get(node);
  if (schedule) return schedule;
  const bySubgraph = new Map<string, FetchNode[]>();
  const rest: PlanNode[] = [];
  for (const child of node.nodes) {
    const fetch = child.kind === 'Flatten' ? child.node : child.kind === 'Fetch' && child.fetchKind === 'entity' ? child : undefined;
    // A batched call is one request already.
    if (!fetch || fetch.parts) {
      rest.push(child);
      continue;
    }
    const list = bySubgraph.get(fetch.subgraph) ?? [];
    list.push(fetch);
    bySubgraph.set(fetch.subgraph, list);
  }
  const merged: MergedFetch[] = [];
  for (const [subgraph, nodes] of bySubgraph) {
    if (nodes.length === 1) {
      rest.push(node.nodes.find((c) => (c.kind === 'Flatten' ? c.node : c) === nodes[0])!);
      continue;
    }
    merged.push(mergeFetches(subgraph, nodes));
  }
  schedule = { merged, rest };
  schedules.set(node, schedule);
  return schedule;
}

function mergeFetches(subgraph: string, nodes: readonly FetchNode[]): MergedFetch {
  const variableUsages = [...new Set(nodes.flatMap((n) => n.variableUsages))];
  const definitions = new Map<string, string>();
  for (const node of nodes) {
    // Each node's operation declares its variables; reuse those declarations.
    const header = /^query[^(]*\((.*?)\) \{ _entities/.exec(node.operation)?.[1] ?? '';
    for (const part of header.split(/,\s*(?=\$)/)) {
      const name = /^\$(\w+)/.exec(part)?.[1];
      if (name && name !== representationsVariableOf(node)) definitions.set(name, part);
    }
  }
  const names = representationVariables(nodes.length, variableUsages);
  const declared = [...names.map((name) => `$${name}: [_Any!]!`), ...variableUsages.map((name) => definitions.get(name) ?? '')].filter(Boolean);
  const fields = nodes.map((node, i) => `_e${i}: _entities(representations: $${names[i]}) ${node.selectionSet}`);
  return {
    subgraph,
    nodes,
    representationVariables: names,
    operation: `query(${declared.join(', ')}) { ${fields.join(' ')} }`,
    selectionSet: `{ ${fields.join(' ')} }`,
    variableUsages,
  };
}
