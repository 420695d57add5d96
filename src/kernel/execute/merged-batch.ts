/**
 * The representations of a merged entity fetch (a plan node with `entries`):
 * each entry's batch is collected as if it were a fetch of its own (so the
 * compiled collectors serve it), then equal representations from several
 * paths are sent once and their answer goes to every position that asked.
 */
import type { FetchNode } from '../plan/query-plan.js';
import { collectEntityBatch } from './compiled-collect.js';
import type { EntityBatch, TypeFacts } from './representations.js';
import type { JsonObject, ResponseTree } from './response-tree.js';

/** Each entry of a merged node as a single-path node, made once per plan node. */
const entryNodes = new WeakMap<FetchNode, readonly FetchNode[]>();

function entriesOf(node: FetchNode): readonly FetchNode[] {
  let nodes = entryNodes.get(node);
  if (!nodes) {
    nodes = (node.entries ?? []).map((entry) => ({ ...node, mergePath: entry.path, representations: entry.representations, entries: undefined }));
    entryNodes.set(node, nodes);
  }
  return nodes;
}

/**
 * A merged node's entries as fetches of their own (each entry node with its
 * batch; entries with nothing to fetch left out): what is sent again, one
 * call per entry, when the merged call failed as a whole.
 */
export function entryFetches(tree: ResponseTree, node: FetchNode, facts: TypeFacts): Array<{ readonly node: FetchNode; readonly batch: EntityBatch }> {
  const fetches: Array<{ node: FetchNode; batch: EntityBatch }> = [];
  for (const entry of entriesOf(node)) {
    const batch = collectEntityBatch(tree, entry, facts);
    if (batch) fetches.push({ node: entry, batch });
  }
  return fetches;
}

/** The batch of any entity fetch node, merged or not; undefined when there is nothing to fetch. */
export function collectFetchBatch(tree: ResponseTree, node: FetchNode, facts: TypeFacts): EntityBatch | undefined {
  if (!node.entries) return collectEntityBatch(tree, node, facts);
  const batches: EntityBatch[] = [];
  for (const entry of entriesOf(node)) {
    const batch = collectEntityBatch(tree, entry, facts);
    if (batch) batches.push(batch);
  }
  if (batches.length <= 1) return batches[0];
  return new UnionBatch(batches);
}

/** Several entries' batches as one: representations deduplicated across them, targets joined. */
class UnionBatch implements EntityBatch {
  readonly representations: JsonObject[] = [];
  readonly targets: JsonObject[][] = [];
  /** Per representation: the batch and index it first came from (where its errors go). */
  private readonly originBatches: EntityBatch[] = [];
  private readonly originIndices: number[] = [];

  constructor(batches: readonly EntityBatch[]) {
    const index = new RepresentationIndex();
    // Target lists are the entries' own until a second path adds to one: then it is copied.
    const borrowed: boolean[] = [];
    for (const batch of batches) {
      const { representations, targets: batchTargets } = batch;
      for (let i = 0; i < representations.length; i++) {
        const representation = representations[i]!;
        const known = index.find(representation, this.representations.length);
        if (known === undefined) {
          this.representations.push(representation);
          this.targets.push(batchTargets[i]!);
          borrowed.push(true);
          this.originBatches.push(batch);
          this.originIndices.push(i);
          continue;
        }
        // One object may be reached through two paths (an answer shared by both): attach once.
        let targets = this.targets[known]!;
        for (const target of batchTargets[i]!) {
          if (targets.includes(target)) continue;
          if (borrowed[known]) {
            targets = this.targets[known] = targets.slice();
            borrowed[known] = false;
          }
          targets.push(target);
        }
      }
    }
  }

  pathOf(index: number): ReadonlyArray<string | number> {
    return this.originBatches[index]!.pathOf(this.originIndices[index]!);
  }
}

/**
 * Finds equal representations. The usual one, `__typename` and one scalar
 * key field, is looked up by its value in a map per type and field (no key
 * string built); others by their JSON (representations of one type are
 * built in one field order, so equal ones print alike).
 */
class RepresentationIndex {
  /** By type, then key field, then value. */
  private readonly byScalar = new Map<string, Map<string, Map<string | number, number>>>();
  private readonly byJson = new Map<string, number>();

  /** The index of an equal representation seen before; else records this one at `next` and returns undefined. */
  find(representation: JsonObject, next: number): number | undefined {
    let fields = 0;
    let field = '';
    for (const name in representation) {
      if (++fields > 2) break;
      if (name !== '__typename') field = name;
    }
    const scalar = representation[field];
    const typename = representation.__typename;
    if (fields === 2 && field !== '' && typeof typename === 'string' && (typeof scalar === 'string' || typeof scalar === 'number')) {
      let byField = this.byScalar.get(typename);
      if (byField === undefined) this.byScalar.set(typename, (byField = new Map()));
      let byValue = byField.get(field);
      if (byValue === undefined) byField.set(field, (byValue = new Map()));
      const known = byValue.get(scalar);
      if (known === undefined) byValue.set(scalar, next);
      return known;
    }
    const key = JSON.stringify(representation);
    const known = this.byJson.get(key);
    if (known === undefined) this.byJson.set(key, next);
    return known;
  }
}
