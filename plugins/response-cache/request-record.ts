import { StateKey, type RequestState } from '../../src/index.js';
import type { AnswerPart } from './client-cache-control.js';

/** What the cache did for one subgraph fetch (the `extensions.responseCache` items). */
export interface FetchCacheStatus {
  /** The subgraph fetched from. */
  readonly subgraph: string;
  /** `root` (root fields) or `entity` (`_entities`). */
  readonly kind: 'root' | 'entity';
  /**
   * `hit`: served from the cache; `partial_hit`: some entities served, the
   * rest fetched; `miss`: fetched from the subgraph; `skip`: the cache was
   * not used (mutation, merged fetch, store unreachable).
   */
  status: 'hit' | 'partial_hit' | 'miss' | 'skip';
  /** Entities (1 for a root fetch) served from the cache; shown with `X-Switchyard-Cache-Debug: detail`. */
  hits?: number;
  /** Entities fetched from the subgraph; shown with `detail`. */
  misses?: number;
  /** Subgraph time (ms) a hit avoided, from measured misses of the same fetch; shown with `detail`. */
  savedMs?: number;
}

/** What the response cache did during one client request. */
export class ResponseCacheRecord {
  /** One item per subgraph fetch, in the order the fetches started. */
  readonly fetches: FetchCacheStatus[] = [];
  /** How cacheable each part of the answer is (for the client's Cache-Control). */
  readonly parts: AnswerPart[] = [];
  /** The client asked for `extensions.responseCache`. */
  debug = false;
  /** ... with the per-fetch counts (`X-Switchyard-Cache-Debug: detail`). */
  detail = false;
  /** The client sent `Cache-Control: no-cache` (with `client_control`): skip reads, write what is fetched. */
  refresh = false;
  /** Hash of the value identifying the request's user (`private_entries`); undefined: none known. */
  user: string | undefined = undefined;
}

/** Request state slot of the response cache's per-request record. */
export const RESPONSE_CACHE = new StateKey<ResponseCacheRecord>('response-cache');

/** The request's record, created on first use. */
export function recordOf(state: RequestState): ResponseCacheRecord {
  let record = state.get(RESPONSE_CACHE);
  if (!record) state.set(RESPONSE_CACHE, (record = new ResponseCacheRecord()));
  return record;
}
