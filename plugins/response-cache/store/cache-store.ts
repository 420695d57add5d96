import type { JsonObject } from '../../../src/index.js';

/** An entry as read back from the store. */
export interface StoredEntry {
  /** The cached entity object, or the root fetch's `data`. Shared: never mutate it. */
  readonly value: JsonObject;
  /** When it expires (ms since the epoch). */
  readonly expiresAt: number;
  /** The subgraph marked it `public`. */
  readonly isPublic: boolean;
  /** Index ids it is listed under, when the store keeps them with the value (memory tier). */
  readonly indexes?: readonly string[];
}

/** One entry to store. */
export interface EntryWrite {
  /** Full key (`cache-key.ts`), prefix included. */
  readonly key: string;
  /** The entity object or root `data` to store. Shared: never mutated. */
  readonly value: JsonObject;
  /** Lifetime in ms (> 0). */
  readonly ttlMs: number;
  /** The subgraph marked it `public` (for the client's Cache-Control on hits). */
  readonly isPublic: boolean;
  /** Index ids it is listed under (`index-ids.ts`). */
  readonly indexes: readonly string[];
}

/**
 * Where entries and their invalidation indexes live: memory (per replica)
 * or a shared Redis store. Every method may throw when the store is
 * unreachable; callers treat that as a miss or a skipped write.
 */
export interface CacheStore {
  /** `memory` or `sharedstore`. */
  readonly provider: 'memory' | 'sharedstore';
  /**
   * A number that changes whenever an entry is written, removed, evicted or
   * expired, for providers that can know it (memory, and the memory tier,
   * whose hits are as fresh as its memory). Absent for Redis alone: other
   * replicas change it unseen.
   */
  version?(): number;
  /** Entries by key, in order; undefined for a miss or an expired entry. */
  getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>>;
  /**
   * The invalidation counter: read it before fetching from a subgraph and
   * pass it to `write`, which then drops entries an invalidation that started
   * later has touched.
   */
  epoch(): Promise<number>;
  /**
   * Stores entries and lists them in their indexes. With `since`, an entry
   * listed under an index invalidated after that epoch is removed again.
   * Resolves with the entries that stayed.
   */
  write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]>;
  /**
   * Removes every entry listed under any of the indexes; resolves with the
   * keys removed. A store that takes several round trips calls `progress`
   * at each answer, so a deadline can tell a long invalidation from a store
   * that stopped answering (`deadline.ts`).
   */
  invalidate(indexes: readonly string[], progress?: () => void): Promise<string[]>;
  /** Closes connections. */
  close(): Promise<void>;
}

/** What the store keeps per key, inside keyv's `{ value, expires }` envelope. */
export interface StoredValue {
  /** Format version (`STORED_VALUE_FORMAT`); a value of another format, or none, reads as a miss. */
  readonly v: number;
  /** The cached value. */
  readonly d: JsonObject;
  /** 1 when public. */
  readonly p?: 1;
  /** Index ids, kept only with `memory_tier` (so other replicas' memory tiers can apply index invalidations). */
  readonly i?: readonly string[];
}
