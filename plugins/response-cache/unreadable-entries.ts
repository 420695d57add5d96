import type { Logger } from '../../src/index.js';
import type { CacheMetrics } from './cache-metrics.js';
import { LogSampler } from './log-sampler.js';
import type { UnreadableKind } from './store/stored-value.js';

/** The warning logged (sampled) for entries read as misses because they are of another format or shape. */
export const UNREADABLE_ENTRY_MESSAGE = 'Response cache entry unreadable, read as a miss';

/** `store_errors_total{operation}` per kind of unreadable entry. */
export const UNREADABLE_OPERATIONS: Readonly<Record<UnreadableKind, string>> = { format: 'read_other_format', shape: 'read_malformed' };

/** Shortest gap between two warnings. */
const LOG_INTERVAL_MS = 10_000;

/**
 * Entries in the shared store that this router cannot use: written in
 * another value format (another router version sharing the store, during a
 * rolling deploy), or not an entry at all (something else writing under the
 * key prefix, a corrupted value). Each is read as a miss, so the subgraph
 * answers and the entry is written over; here each is counted
 * (`switchyard_response_cache_store_errors_total{operation="read_other_format"|"read_malformed"}`)
 * and one warning is logged at most every 10 s, with the number not logged
 * since the last one.
 */
export class UnreadableEntries {
  private readonly sampler: LogSampler;

  constructor(
    private readonly log: Logger,
    private readonly metrics: CacheMetrics,
    intervalMs = LOG_INTERVAL_MS,
  ) {
    this.sampler = new LogSampler(intervalMs);
  }

  /** An entry at `key` was read as a miss. */
  report(key: string, kind: UnreadableKind, reason: string): void {
    this.metrics.storeError(UNREADABLE_OPERATIONS[kind]);
    const notLogged = this.sampler.take();
    if (notLogged !== undefined) this.log.warn({ key, kind, reason, entries_not_logged: notLogged }, UNREADABLE_ENTRY_MESSAGE);
  }
}
