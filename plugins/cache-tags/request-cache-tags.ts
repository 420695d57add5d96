import type { SubgraphRequest } from '../../src/index.js';
import { StateKey } from '../../src/index.js';

/** The cache tags one subgraph response declared, as the fetch's kind reads them. */
export type FetchCacheTags =
  | {
      /** A root fetch: `extensions.cacheTags`. */
      readonly kind: 'root';
      /** Tags of the whole answer. */
      readonly tags: readonly string[];
    }
  | {
      /** An entity fetch: `extensions.entityCacheTags`. */
      readonly kind: 'entity';
      /** Tags per entity, in `_entities` order (the same length as `_entities`). */
      readonly entities: ReadonlyArray<readonly string[]>;
    };

/**
 * The cache tags subgraphs declared during one client request, kept per
 * subgraph request. Read it from request state with `CACHE_TAGS`.
 */
export class RequestCacheTags {
  private readonly byFetch = new Map<SubgraphRequest, FetchCacheTags>();

  /** Records what the response to `request` declared (the cache-tags plugin does this). */
  record(request: SubgraphRequest, tags: FetchCacheTags): void {
    this.byFetch.set(request, tags);
  }

  /**
   * Tags of the response to `request` (the object the fetch stage's
   * after-hooks see as `input`); undefined when it declared none, or the
   * declaration was unusable and dropped.
   */
  of(request: SubgraphRequest): FetchCacheTags | undefined {
    return this.byFetch.get(request);
  }

  /** Every tag declared in this request, by subgraph name. */
  bySubgraph(): ReadonlyMap<string, ReadonlySet<string>> {
    const result = new Map<string, Set<string>>();
    for (const [request, tags] of this.byFetch) {
      let set = result.get(request.subgraph);
      if (!set) result.set(request.subgraph, (set = new Set()));
      const lists = tags.kind === 'root' ? [tags.tags] : tags.entities;
      for (const list of lists) for (const tag of list) set.add(tag);
    }
    return result;
  }
}

/** Request state slot holding the request's `RequestCacheTags`; absent until a subgraph declares tags. */
export const CACHE_TAGS = new StateKey<RequestCacheTags>('cache-tags');
