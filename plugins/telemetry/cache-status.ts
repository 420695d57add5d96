/**
 * What the response cache did for a request, read from the request state
 * slot the `response-cache` plugin exports (`RESPONSE_CACHE`). Nothing here
 * when the cache is off: the slot is simply empty.
 */

import type { RequestState } from '../../src/index.js';
import { RESPONSE_CACHE, type FetchCacheStatus } from '../response-cache/index.js';

export type CacheStatus = FetchCacheStatus['status'];

/** Counts of the cache's answers in one request. */
export interface CacheCounts {
  readonly hits: number;
  readonly partialHits: number;
  readonly misses: number;
}

/** Hits, partial hits and misses of the request; undefined when the cache did not run. */
export function cacheCounts(state: RequestState): CacheCounts | undefined {
  const record = state.get(RESPONSE_CACHE);
  if (!record || record.fetches.length === 0) return undefined;
  let hits = 0;
  let partialHits = 0;
  let misses = 0;
  for (const fetch of record.fetches) {
    if (fetch.status === 'hit') hits++;
    else if (fetch.status === 'partial_hit') partialHits++;
    else if (fetch.status === 'miss') misses++;
  }
  return { hits, partialHits, misses };
}

/**
 * The cache's status for one fetch that has just ended: the first entry of
 * the request's record for the same subgraph and kind that no earlier fetch
 * took. The record lists fetches in the order they started; two parallel
 * fetches of the same subgraph and kind may be told apart wrongly (the
 * planner rarely makes them).
 */
export function takeFetchStatus(state: RequestState, taken: Set<object>, subgraph: string, kind: 'root' | 'entity'): CacheStatus | undefined {
  const record = state.get(RESPONSE_CACHE);
  if (!record) return undefined;
  for (const fetch of record.fetches) {
    if (fetch.subgraph === subgraph && fetch.kind === kind && !taken.has(fetch)) {
      taken.add(fetch);
      return fetch.status;
    }
  }
  return undefined;
}
