import type { JsonObject, SubgraphRequest, SubgraphResponse } from '../../src/index.js';
import { typenameOf, type CacheKeys } from './cache-key.js';

/** The keys of one entity fetch, and its last all-hit answer. */
export interface EntityLookup {
  readonly subgraph: string;
  readonly selectionSet: string;
  /** The variables the keys were built from (when they are the same object, the keys hold without a check). */
  variables: Readonly<Record<string, unknown>>;
  readonly fetchHash: string;
  /** One key per representation, in order. */
  readonly keys: readonly string[];
  /** `__typename` per representation, in order. */
  readonly types: readonly string[];
  /** The entities of `answer`. */
  values: readonly JsonObject[] | undefined;
  /** The last all-hit answer: served again while the store hands out the very same entities. */
  answer: SubgraphResponse | undefined;
  /** When the store can tell that nothing changed since `answer` was read: what the reuse needs. */
  reuse: HitReuse | undefined;
}

/** An all-hit answer that may be served without asking the store again. */
interface HitReuse {
  /** The store's `version()` before the read that gave the answer. */
  readonly version: number;
  /** The earliest expiry among its entries (ms since the epoch). */
  readonly expiresAt: number;
  /** Every entry was marked public. */
  readonly isPublic: boolean;
  /** When the store was last actually read for it. */
  readonly readAt: number;
}

/** What an all-hit answer's entries say about its lifetime. */
export interface HitFacts {
  /** The store's `version()` before the read, when it has one. */
  readonly version: number | undefined;
  /** The earliest expiry among the entries (ms since the epoch). */
  readonly expiresAt: number;
  /** Every entry was marked public. */
  readonly isPublic: boolean;
}

/**
 * How long an all-hit answer is served without reading the store, at most:
 * reading refreshes the entries' recency in the LRU, so hot entries are
 * not evicted as if unused.
 */
const REUSE_MS = 1000;

/**
 * What the cache remembers between requests so that a repeated hit costs
 * little: per representations list, its keys; per cached value, the
 * answer built from it. The kernel shares the work derived from identical
 * answer objects between requests (representations of later fetches,
 * shaped data), and a repeated hit hands it the identical objects. Nothing
 * here is ever mutated; entries live as long as the kernel or the store
 * holds their objects (weak maps).
 */
export class HitMemo {
  private readonly lookups = new WeakMap<readonly JsonObject[], EntityLookup>();
  private readonly rootAnswers = new WeakMap<JsonObject, SubgraphResponse>();

  constructor(private readonly keys: CacheKeys) {}

  /** The keys of an entity fetch; built only for a representations list not seen before with this fetch. */
  entityLookup(request: SubgraphRequest, representations: readonly JsonObject[]): EntityLookup {
    const known = this.lookups.get(representations);
    if (known && known.subgraph === request.subgraph && known.selectionSet === request.selectionSet) {
      if (known.variables === request.variables) return known;
      if (known.fetchHash === this.keys.fetchHash(request)) {
        known.variables = request.variables;
        return known;
      }
    }
    const fetchHash = this.keys.fetchHash(request);
    const lookup: EntityLookup = {
      subgraph: request.subgraph,
      selectionSet: request.selectionSet,
      variables: request.variables,
      fetchHash,
      keys: this.keys.entityKeys(request.subgraph, fetchHash, representations),
      types: representations.map(typenameOf),
      values: undefined,
      answer: undefined,
      reuse: undefined,
    };
    this.lookups.set(representations, lookup);
    return lookup;
  }

  /** The answer of an all-hit entity fetch: the previous one when every entity is the same object. */
  entityAnswer(lookup: EntityLookup, values: readonly JsonObject[], facts: HitFacts): SubgraphResponse {
    lookup.reuse = facts.version === undefined ? undefined : { ...facts, version: facts.version, readAt: Date.now() };
    const previous = lookup.values;
    if (previous && lookup.answer && sameObjects(previous, values)) return lookup.answer;
    const answer: SubgraphResponse = { data: { _entities: values as JsonObject[] } };
    lookup.values = values;
    lookup.answer = answer;
    return answer;
  }

  /**
   * The last all-hit answer of this lookup, when the store (at `version`)
   * has not changed since it was read, none of its entries has expired, and
   * it was read within the last second. Undefined: read the store.
   */
  reusableHit(lookup: EntityLookup, version: number | undefined): { answer: SubgraphResponse; ttlMs: number; isPublic: boolean } | undefined {
    const reuse = lookup.reuse;
    if (!reuse || !lookup.answer || version === undefined || reuse.version !== version) return undefined;
    const now = Date.now();
    if (now >= reuse.expiresAt || now - reuse.readAt >= REUSE_MS) return undefined;
    return { answer: lookup.answer, ttlMs: reuse.expiresAt - now, isPublic: reuse.isPublic };
  }

  /** The answer of a root fetch served from the cache: one per cached value. */
  rootAnswer(value: JsonObject): SubgraphResponse {
    let answer = this.rootAnswers.get(value);
    if (!answer) this.rootAnswers.set(value, (answer = { data: value }));
    return answer;
  }
}

function sameObjects(a: readonly JsonObject[], b: readonly JsonObject[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
