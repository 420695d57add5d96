import type { FederationIndex } from '../graph/federation-index.js';
import type { FetchGroup } from './fetch-group.js';
import type { SelectionTree } from './selection-tree.js';

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
 * The work stays linear in the size of the groups (a client can make
 * thousands with aliases or fragments): a cluster keeps, per object type,
 * the one selection its members make on it, and one shape per response
 * key over all its members, so a group is checked against those, not
 * against every member; and a group tries at most `MAX_CLUSTERS_TRIED`
 * clusters of its bucket before starting its own (groups left apart are
 * still batched into one request, below).
 *
 * Returns the groups left, the merged ones in place of their first member.
 */
export function mergeFetchGroups(index: FederationIndex, groups: readonly FetchGroup[]): FetchGroup[] {
  const present = new Set(groups);
  const waves = waveOf(groups, present);
  const buckets = new Map<string, Cluster[]>();
  const absorbed = new Map<FetchGroup, FetchGroup>();
  for (const group of groups) {
    if (!mergeable(group)) continue;
    const key = `${group.scope}|${group.subgraph}|${waves.get(group)}`;
    const clusters = buckets.get(key) ?? [];
    buckets.set(key, clusters);
    const selections = selectionsOf(index, group);
    const cluster = clusters.slice(-MAX_CLUSTERS_TRIED).find((candidate) => candidate.admits(selections));
    if (cluster) {
      cluster.add(selections);
      absorbed.set(group, cluster.lead);
    } else {
      const own = new Cluster(group);
      own.add(selections);
      clusters.push(own);
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

/** Clusters of one bucket a group is checked against before it starts its own (bounds the work per group). */
const MAX_CLUSTERS_TRIED = 8;

/** A group's selection on one type condition, as merging compares it. */
interface ConditionSelection {
  readonly condition: string;
  readonly tree: SelectionTree;
  /** The selection's text. */
  readonly text: string;
  /** The `__typename` its representations carry, as JSON. */
  readonly typename: string;
  /** The object types the condition covers. */
  readonly objectTypes: readonly string[];
}

function selectionsOf(index: FederationIndex, group: FetchGroup): ConditionSelection[] {
  return [...group.tree.fragments].map(([condition, tree]) => ({
    condition,
    tree,
    text: tree.print(),
    typename: JSON.stringify(group.representations.get(condition)?.typename),
    objectTypes: possible(index, condition),
  }));
}

/** The shape one response key has in a cluster: the subgraph's type, and its sub-selection's keys. */
interface KeyShape {
  readonly typeText: string;
  readonly children: Map<string, KeyShape>;
}

/** Groups merged into one call: its first member, what its members select per object type, and its shapes. */
class Cluster {
  /** The selections made on each object type, one per condition covering it (members agree on each). */
  private readonly byObjectType = new Map<string, ConditionSelection[]>();
  /** One shape per response key, over every member's selections. */
  private readonly shapes = new Map<string, KeyShape>();

  constructor(readonly lead: FetchGroup) {}

  /**
   * Whether a group can join: every type condition it selects on that could
   * match the cluster's entities is the same condition with the same
   * selection (and the same `__typename` in representations), and a key it
   * shares with the cluster has one shape in both (types no object has both
   * of still answer into one `_entities` list, which the subgraph validates
   * as one document).
   */
  admits(selections: readonly ConditionSelection[]): boolean {
    for (const selection of selections) {
      for (const objectType of selection.objectTypes) {
        for (const there of this.byObjectType.get(objectType) ?? []) {
          if (there.condition !== selection.condition || there.text !== selection.text || there.typename !== selection.typename) return false;
        }
      }
      if (!fitsShapes(this.shapes, selection.tree)) return false;
    }
    return true;
  }

  add(selections: readonly ConditionSelection[]): void {
    for (const selection of selections) {
      for (const objectType of selection.objectTypes) {
        const there = this.byObjectType.get(objectType);
        // A group may select one type through two conditions (`User` and `Node`): both are kept, each one checked.
        if (!there) this.byObjectType.set(objectType, [selection]);
        else if (!there.some((known) => known.condition === selection.condition)) there.push(selection);
      }
      addShapes(this.shapes, selection.tree);
    }
  }
}

/** Whether every field of a selection (its fragments' too) has the shape the map has for its key, sub-selections included. */
function fitsShapes(shapes: ReadonlyMap<string, KeyShape>, tree: SelectionTree): boolean {
  for (const field of tree.fields.values()) {
    const shape = shapes.get(field.responseKey);
    if (!shape) continue;
    if (shape.typeText !== field.typeText) return false;
    if (field.children && !fitsShapes(shape.children, field.children)) return false;
  }
  for (const fragment of tree.fragments.values()) if (!fitsShapes(shapes, fragment)) return false;
  return true;
}

/** Records a selection's shapes (the first shape of a key stays). */
function addShapes(shapes: Map<string, KeyShape>, tree: SelectionTree): void {
  for (const field of tree.fields.values()) {
    let shape = shapes.get(field.responseKey);
    if (!shape) {
      shape = { typeText: field.typeText, children: new Map() };
      shapes.set(field.responseKey, shape);
    }
    if (field.children) addShapes(shape.children, field.children);
  }
  for (const fragment of tree.fragments.values()) addShapes(shapes, fragment);
}

function possible(index: FederationIndex, condition: string): readonly string[] {
  const types = index.possibleTypes(condition);
  return types.length > 0 ? types : [condition];
}
