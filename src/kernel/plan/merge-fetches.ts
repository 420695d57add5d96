import type { FederationIndex } from '../graph/federation-index.js';
import type { FetchGroup } from './fetch-group.js';
import type { SelectionTree, TreeField } from './selection-tree.js';

/**
 * Fetch merging: entity fetches to one subgraph that become ready in the
 * same wave are sent as one `_entities` call, whatever paths (and root
 * fields) their objects sit under.
 *
 * A group's wave is the length of the longest chain of fetches it waits
 * for. Two groups of one wave never wait for each other, so merging them
 * cannot make a cycle; the merged call waits for all they waited for. That
 * is the price: a fetch ready early waits for the slowest input of its wave
 * mates instead of going alone, in exchange for one call fewer.
 *
 * Groups are merged only when their entities would get exactly the answer
 * they would have had alone: for every type they look up, the selection on
 * it is the same text (a type another group selects differently is never
 * merged, so one path's fields cannot null another path's entities through
 * a non-null error, nor land under its response keys; a subgraph failing
 * the whole call is asked again per path, see execute-plan.ts), and a response key
 * selected on two types no object has both of has one shape on both (the
 * subgraph validates the merged document as one). Groups with aliased
 * fields, and groups selecting outside of type conditions, stay alone.
 *
 * Returns the groups left, the merged ones in place of their first member.
 */
export function mergeFetchGroups(index: FederationIndex, groups: readonly FetchGroup[]): FetchGroup[] {
  const present = new Set(groups);
  const waves = waveOf(groups, present);
  const buckets = new Map<string, FetchGroup[][]>();
  const absorbed = new Map<FetchGroup, FetchGroup>();
  for (const group of groups) {
    if (!mergeable(group)) continue;
    const key = `${group.scope}|${group.subgraph}|${waves.get(group)}`;
    const clusters = buckets.get(key) ?? [];
    buckets.set(key, clusters);
    const cluster = clusters.find((members) => members.every((member) => compatible(index, member, group)));
    if (cluster) {
      cluster.push(group);
      absorbed.set(group, cluster[0]!);
    } else {
      clusters.push([group]);
    }
  }
  if (absorbed.size === 0) return [...groups];
  for (const [group, into] of absorbed) {
    into.mergedWith.push(group);
    for (const [condition, tree] of group.tree.fragments) if (!into.tree.fragments.has(condition)) into.tree.fragments.set(condition, tree);
  }
  return absorb(groups, absorbed);
}

/**
 * Batching: entity fetches to one subgraph of one wave that merging left
 * apart (they select a type differently, or select outside type conditions,
 * or rename fields) still go out as one request, each as its own aliased
 * `_entities` field (`_0: _entities(representations: $r0) { ... }`). Every
 * part keeps its own selection, representations and aliases and is read
 * back as if sent alone, so nothing one part selects can reach another
 * part's entities. Same waves as merging: the batch waits for all its
 * parts waited for.
 *
 * Returns the groups left (each batch in place of its first part) and, per
 * batch, its parts in order.
 */
export function batchFetchGroups(groups: readonly FetchGroup[]): { groups: FetchGroup[]; batches: Map<FetchGroup, FetchGroup[]> } {
  const waves = waveOf(groups, new Set(groups));
  const batches = new Map<FetchGroup, FetchGroup[]>();
  const leads = new Map<string, FetchGroup>();
  const absorbed = new Map<FetchGroup, FetchGroup>();
  for (const group of groups) {
    if (group.kind !== 'entity') continue;
    const key = `${group.scope}|${group.subgraph}|${waves.get(group)}`;
    const lead = leads.get(key);
    if (!lead) {
      leads.set(key, group);
      continue;
    }
    const parts = batches.get(lead) ?? [lead];
    batches.set(lead, parts);
    parts.push(group);
    absorbed.set(group, lead);
  }
  if (absorbed.size === 0) return { groups: [...groups], batches };
  return { groups: absorb(groups, absorbed), batches };
}

/** Removes the absorbed groups: their dependencies join their lead's, and whoever waited for them waits for the lead. */
function absorb(groups: readonly FetchGroup[], absorbed: ReadonlyMap<FetchGroup, FetchGroup>): FetchGroup[] {
  for (const [group, into] of absorbed) for (const dependency of group.dependsOn) into.dependsOn.add(dependency);
  const kept = groups.filter((group) => !absorbed.has(group));
  for (const group of kept) {
    for (const dependency of [...group.dependsOn]) {
      const into = absorbed.get(dependency);
      if (!into) continue;
      group.dependsOn.delete(dependency);
      if (into !== group) group.dependsOn.add(into);
    }
  }
  return kept;
}

/** Longest chain of (present) dependencies before each group. */
function waveOf(groups: readonly FetchGroup[], present: ReadonlySet<FetchGroup>): Map<FetchGroup, number> {
  const waves = new Map<FetchGroup, number>();
  const visit = (group: FetchGroup): number => {
    const known = waves.get(group);
    if (known !== undefined) return known;
    let wave = 0;
    for (const dependency of group.dependsOn) if (present.has(dependency)) wave = Math.max(wave, visit(dependency) + 1);
    waves.set(group, wave);
    return wave;
  };
  for (const group of groups) visit(group);
  return waves;
}

/** An entity group whose selection is only type conditions, one per type it looks up, with no renamed fields. */
function mergeable(group: FetchGroup): boolean {
  if (group.kind !== 'entity' || group.aliases.length > 0 || group.tree.fields.size > 0) return false;
  if (group.representations.size === 0 || group.representations.size !== group.tree.fragments.size) return false;
  for (const condition of group.tree.fragments.keys()) if (!group.representations.has(condition)) return false;
  return true;
}

/**
 * Whether two groups can share one call: every type condition one of them
 * selects on that could match the other's entities is the same condition
 * with the same selection (and the same `__typename` in representations).
 */
function compatible(index: FederationIndex, a: FetchGroup, b: FetchGroup): boolean {
  for (const [conditionA, treeA] of a.tree.fragments) {
    for (const [conditionB, treeB] of b.tree.fragments) {
      // Types no object has both of still answer into one `_entities` list: a key they share must have one shape there.
      if (!overlap(index, conditionA, conditionB)) {
        if (!sameShapes(treeA, treeB)) return false;
        continue;
      }
      if (conditionA !== conditionB || treeA.print() !== treeB.print()) return false;
      const typenameA = a.representations.get(conditionA)?.typename;
      const typenameB = b.representations.get(conditionB)?.typename;
      if (JSON.stringify(typenameA) !== JSON.stringify(typenameB)) return false;
    }
  }
  return true;
}

/**
 * Whether every response key both selections use has one shape in both (the
 * subgraph's type, and the same for their sub-selections): the subgraph
 * refuses a document where `name: String!` and `name: String` share a key,
 * even under fragments on different types.
 */
function sameShapes(a: SelectionTree, b: SelectionTree): boolean {
  const fieldsB = fieldsByKey(b);
  for (const [key, fieldsA] of fieldsByKey(a)) {
    for (const fieldA of fieldsA) {
      for (const other of fieldsB.get(key) ?? []) {
        if (fieldA.typeText !== other.typeText) return false;
        if (fieldA.children && other.children && !sameShapes(fieldA.children, other.children)) return false;
      }
    }
  }
  return true;
}

/** The fields of a selection and of its fragments (one level of response objects), by response key. */
function fieldsByKey(tree: SelectionTree, into = new Map<string, TreeField[]>()): Map<string, TreeField[]> {
  for (const field of tree.fields.values()) {
    const fields = into.get(field.responseKey);
    if (fields) fields.push(field);
    else into.set(field.responseKey, [field]);
  }
  for (const fragment of tree.fragments.values()) fieldsByKey(fragment, into);
  return into;
}

/** Whether some object could match both type conditions. */
function overlap(index: FederationIndex, a: string, b: string): boolean {
  if (a === b) return true;
  const typesB = new Set(possible(index, b));
  return possible(index, a).some((type) => typesB.has(type));
}

function possible(index: FederationIndex, condition: string): readonly string[] {
  const types = index.possibleTypes(condition);
  return types.length > 0 ? types : [condition];
}
