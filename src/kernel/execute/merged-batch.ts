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
  private readonly origins: Array<{ batch: EntityBatch; index: number }> = [];

  constructor(batches: readonly EntityBatch[]) {
    const byKey = new Map<string, number>();
    for (const batch of batches) {
      batch.representations.forEach((representation, index) => {
        const key = representationKey(representation);
        const known = byKey.get(key);
        if (known === undefined) {
          byKey.set(key, this.representations.length);
          this.representations.push(representation);
          this.targets.push([...batch.targets[index]!]);
          this.origins.push({ batch, index });
          return;
        }
        // One object may be reached through two paths (an answer shared by both): attach once.
        const targets = this.targets[known]!;
        for (const target of batch.targets[index]!) if (!targets.includes(target)) targets.push(target);
      });
    }
  }

  pathOf(index: number): ReadonlyArray<string | number> {
    const origin = this.origins[index]!;
    return origin.batch.pathOf(origin.index);
  }
}

/**
 * Equal representations give equal keys. The usual one, `__typename` and
 * one scalar key field, skips JSON; others are printed (representations of
 * one type are built in one field order, so equal ones print alike).
 */
function representationKey(representation: JsonObject): string {
  let fields = 0;
  let field = '';
  for (const name in representation) {
    if (++fields > 2) break;
    if (name !== '__typename') field = name;
  }
  const scalar = representation[field];
  if (fields === 2 && field !== '' && typeof representation.__typename === 'string' && (typeof scalar === 'string' || typeof scalar === 'number')) {
    return `${typeof scalar === 'string' ? 's' : 'n'}\0${String(representation.__typename)}\0${field}\0${scalar}`;
  }
  return JSON.stringify(representation);
}
