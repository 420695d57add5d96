/**
 * Where a subgraph's errors go in the client's response. An entity error is
 * reported at every position of the entity it names (one representation may
 * stand for an entity found at several positions), found in the response
 * tree only when an error needs them, with copies bounded by the positions;
 * a path never shows the planner's own names (aliases renamed back, the path
 * cut before an internal key).
 */
import type { GraphQLErrorJSON } from '../errors.js';
import { INTERNAL_MARK } from '../plan/planner-support.js';
import type { FetchAlias, FetchNode } from '../plan/query-plan.js';
import type { EntityBatch } from './representations.js';
import type { JsonObject, ResponseTree } from './response-tree.js';
import { ErrorPaths } from './subgraph-errors.js';

/** The client paths of an error at `field` (an `_entities` field of the call): each position of the entity it names. */
export function entityErrorPath(error: GraphQLErrorJSON, field: string, positions: EntityPositions): ReadonlyArray<string | number> | ErrorPaths | undefined {
  // The path is the subgraph's: anything at all until checked.
  const path = error.path;
  if (!Array.isArray(path) || path[0] !== field || typeof path[1] !== 'number') return undefined;
  const index = path[1];
  if (!Number.isInteger(index) || index < 0 || index >= positions.batch.representations.length) return undefined;
  const rest = clientSegments(path.slice(2), positions.node.aliases);
  const at = positions.of(index, rest, typeof error.message === 'string' ? error.message : '');
  return at.length === 1 ? [...at[0]!, ...rest] : new ErrorPaths(at.map((position) => [...position, ...rest]));
}

/**
 * The client paths of an error that names no entity, in the answer to a
 * lookup that failed as a whole (no `_entities` list: @apollo/subgraph
 * answers a reference resolver that throws with `data: null` and the error
 * at `["_entities"]`): every position the lookup was to fill, as when the
 * request fails, so none is left null with a made-up 'Cannot return null'.
 * Undefined for an error with a path elsewhere (not about this lookup).
 */
export function wholeLookupErrorPath(error: GraphQLErrorJSON, field: string, positions: EntityPositions): ReadonlyArray<string | number> | ErrorPaths | undefined {
  const path = error.path;
  if (path !== undefined && !(Array.isArray(path) && (path.length === 0 || (path.length === 1 && path[0] === field)))) return undefined;
  const at = positions.everywhere(typeof error.message === 'string' ? error.message : '');
  return at.length === 1 ? at[0] : new ErrorPaths(at);
}

/** Error copies allowed per position of a fetch: a few distinct failing fields of each entity, not a subgraph's every repeat. */
const COPIES_PER_POSITION = 16;

/**
 * The response positions of a prepared entity fetch's representations, for
 * its errors: an entity found at several positions (deduplicated into one
 * representation) failed at each of them. A batch keeps only each
 * representation's first position, so the others are found again in the
 * tree, once, and only when an error needs them. Copies stay linear in the
 * positions: an error repeating one already copied (same entity, same path
 * inside it, same message) goes to the first position only, and all copies
 * together are capped at `COPIES_PER_POSITION` per position.
 */
export class EntityPositions {
  private byTarget: Map<JsonObject, Array<ReadonlyArray<string | number>>> | undefined;
  /** Error copies still allowed beyond the first position of each. */
  private budget: number;
  /** Errors already copied to every position: representation index, the path inside the entity, the message. */
  private readonly copied = new Set<string>();
  /** Every position, once `everywhere` needed them. */
  private every: Array<ReadonlyArray<string | number>> | undefined;
  /** Positions of representations asked about so far. */
  private readonly found = new Map<number, Array<ReadonlyArray<string | number>>>();

  constructor(
    private readonly tree: ResponseTree,
    readonly node: FetchNode,
    readonly batch: EntityBatch,
    private readonly satisfies: (typename: string, condition: string) => boolean,
  ) {
    this.budget = 0;
    for (const targets of batch.targets) this.budget += targets.length * COPIES_PER_POSITION;
  }

  /** The positions an error at `rest` inside representation `index` goes to (its first one alone for a repeat, or once the budget is spent). */
  of(index: number, rest: ReadonlyArray<string | number> = [], message = ''): ReadonlyArray<ReadonlyArray<string | number>> {
    const first = this.batch.pathOf(index);
    if (this.single(index)) return [first];
    const key = `${index}\u0000${JSON.stringify(rest)}\u0000${message}`;
    if (this.copied.has(key)) return [first];
    this.copied.add(key);
    const paths = this.positionsOf(index);
    if (paths.length <= 1 || this.budget < paths.length - 1) return [first];
    this.budget -= paths.length - 1;
    return paths;
  }

  /**
   * The positions an error about the whole fetch goes to: all of them, or
   * the first alone for a repeat (same message) or once the budget is spent.
   */
  everywhere(message: string): ReadonlyArray<ReadonlyArray<string | number>> {
    const first = this.batch.pathOf(0);
    const key = `*\u0000${message}`;
    if (this.copied.has(key)) return [first];
    this.copied.add(key);
    // Found once however many messages: each further one costs a budget check, not a walk.
    const paths = (this.every ??= this.all());
    if (paths.length <= 1 || this.budget < paths.length - 1) return [first];
    this.budget -= paths.length - 1;
    return paths;
  }

  /** Every position the fetch was to fill, in response order of each representation. */
  all(): Array<ReadonlyArray<string | number>> {
    const paths: Array<ReadonlyArray<string | number>> = [];
    for (let i = 0; i < this.batch.representations.length; i++) {
      // A loop, not a spread: one entity may stand at hundreds of thousands of positions.
      for (const path of this.single(i) ? [this.batch.pathOf(i)] : this.positionsOf(i)) paths.push(path);
    }
    return paths;
  }

  /**
   * Whether representation `index` answers one position only: one target on
   * one merge path (a merged call lists an object reached through two of its
   * paths once, so there the tree is asked).
   */
  private single(index: number): boolean {
    return this.batch.targets[index]!.length <= 1 && this.node.entries === undefined;
  }

  /** Each distinct position of representation `index` (an object attached at several positions appears once per position, not per target). */
  private positionsOf(index: number): Array<ReadonlyArray<string | number>> {
    // Once per representation: many errors about one entity must not walk its positions each time.
    let known = this.found.get(index);
    if (!known) this.found.set(index, (known = this.findPositions(index)));
    return known;
  }

  private findPositions(index: number): Array<ReadonlyArray<string | number>> {
    const byTarget = (this.byTarget ??= this.find());
    const seen = new Set<JsonObject>();
    const paths: Array<ReadonlyArray<string | number>> = [];
    for (const target of this.batch.targets[index]!) {
      if (seen.has(target)) continue;
      seen.add(target);
      for (const path of byTarget.get(target) ?? []) paths.push(path);
    }
    return paths.length > 0 ? paths : [this.batch.pathOf(index)];
  }

  private find(): Map<JsonObject, Array<ReadonlyArray<string | number>>> {
    const byTarget = new Map<JsonObject, Array<ReadonlyArray<string | number>>>();
    const mergePaths = this.node.entries ? this.node.entries.map((entry) => entry.path) : [this.node.mergePath];
    for (const mergePath of mergePaths) {
      for (const position of this.tree.collect(mergePath, this.satisfies)) {
        const paths = byTarget.get(position.primary);
        if (paths) paths.push(position.path);
        else byTarget.set(position.primary, [position.path]);
      }
    }
    return byTarget;
  }
}

/** A root fetch's errors are at the client's paths already, but for what the planner named itself. */
export function rootErrorPath(path: ReadonlyArray<string | number> | undefined, aliases: readonly FetchAlias[] | undefined): ReadonlyArray<string | number> | undefined {
  if (!Array.isArray(path)) return path;
  const segments = clientSegments(path, aliases);
  return segments.length > 0 ? segments : undefined;
}

/**
 * A subgraph path's segments as the client knows them: a field the planner
 * sent under an alias (`name__sy_0`) under its client key, and the path cut
 * before a field the planner added (`__sy_weight`, a `@requires` or key
 * field under an internal key): the error belongs to the nearest field the
 * client asked for. Internal names never reach the client.
 */
export function clientSegments(path: ReadonlyArray<string | number>, aliases: readonly FetchAlias[] | undefined): Array<string | number> {
  const out: Array<string | number> = [];
  for (const segment of path) {
    if (typeof segment === 'string' && segment.includes(INTERNAL_MARK)) {
      const alias = aliases?.find((a) => a.alias === segment);
      if (alias) {
        out.push(alias.responseKey);
        continue;
      }
      if (segment.startsWith(INTERNAL_MARK)) break;
    }
    out.push(segment);
  }
  return out;
}
