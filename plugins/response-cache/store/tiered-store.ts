import type { CacheStore, EntryWrite, StoredEntry } from './cache-store.js';
import { MemoryCacheStore } from './memory-store.js';

/** Options of `TieredCacheStore` (`response_cache.memory_tier`). */
export interface MemoryTierOptions {
  /** Approximate bytes of entries kept (key plus JSON length of the value). */
  readonly maxBytes: number;
  /** Entries kept. */
  readonly maxEntries: number;
  /** How long an invalidation mark is kept for writes racing it (longest possible fetch). */
  readonly markTtlMs: number;
}

/** Read results answered without the shared store (it was not asked, or failed): they say nothing of its health. */
const fromMemoryOnly = new WeakSet<object>();

/** Whether a `getMany` result came from a memory tier alone (so the shared store's health is unknown from it). */
export function answeredFromMemory(entries: readonly unknown[]): boolean {
  return fromMemoryOnly.has(entries);
}

/**
 * An in-process memory tier in front of the shared store: the memory
 * provider's store (bounded by bytes too) holding copies of shared-store
 * entries. A read is answered from memory when every key is there;
 * otherwise the keys missing from memory are read from the shared store and
 * what it has is kept in memory until the expiry the shared store reports.
 * Writes go to the shared store first and then to memory with an expiry
 * computed before the shared write, so a memory entry never outlives its
 * Redis entry.
 *
 * Invalidation clears memory first (entries and a mark, so a write racing
 * it cannot put the entry back into memory), then the shared store.
 * `invalidateMemory` and `clearMemory` apply other replicas' and workers'
 * invalidations (Redis was already cleared by the one that received it).
 *
 * When the shared store fails and memory holds some of the keys, a read
 * answers those from memory and the rest as misses (a degraded store, or an
 * open circuit breaker, still serves the memory tier); with none in memory
 * the failure is passed on.
 */
export class TieredCacheStore implements CacheStore {
  readonly provider = 'sharedstore' as const;
  private readonly memory: MemoryCacheStore;
  /** Invalidations applied here (they may concern entries served from Redis without being kept in memory). */
  private invalidations = 0;

  constructor(
    private readonly shared: CacheStore,
    options: MemoryTierOptions,
  ) {
    this.memory = new MemoryCacheStore(options);
  }

  /**
   * Changes whenever the memory tier changes or an invalidation arrives. A
   * hit served from memory is as fresh as memory is (another replica's
   * write to Redis reaches memory no sooner than an invalidation does), so
   * an all-hit answer may be reused while this number stays (`HitMemo`),
   * as with the memory provider. Both counters only grow, so their sum
   * changes when either does.
   */
  version(): number {
    return this.memory.version() + this.invalidations;
  }

  /** Entries in the memory tier now (tests). */
  get memorySize(): number {
    return this.memory.size;
  }

  /** Approximate bytes in the memory tier now (tests). */
  get memoryBytes(): number {
    return this.memory.bytes;
  }

  async getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>> {
    const found = await this.memory.getMany(keys);
    const missing: number[] = [];
    found.forEach((entry, i) => {
      if (!entry) missing.push(i);
    });
    if (missing.length === 0) {
      fromMemoryOnly.add(found);
      return found;
    }
    const since = this.memory.currentEpoch;
    let fetched: Array<StoredEntry | undefined>;
    try {
      fetched = await this.shared.getMany(missing.map((i) => keys[i]!));
    } catch (error) {
      if (missing.length === keys.length) throw error;
      fromMemoryOnly.add(found);
      return found;
    }
    const copies = [];
    for (const [i, position] of missing.entries()) {
      const entry = fetched[i];
      if (!entry) continue;
      found[position] = entry;
      // Without the indexes stored beside it (a replica without the memory tier wrote it), another
      // replica's invalidation could not find the copy: it is served but not kept.
      if (entry.indexes) copies.push({ key: keys[position]!, value: entry.value, expiresAt: entry.expiresAt, isPublic: entry.isPublic, indexes: entry.indexes });
    }
    // Entries read before an invalidation of their indexes that ran meanwhile are served to this request but not kept.
    this.memory.keep(copies, since);
    return found;
  }

  epoch(): Promise<number> {
    return this.shared.epoch();
  }

  async write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    const startedAt = Date.now();
    const memorySince = this.memory.currentEpoch;
    const kept = await this.shared.write(entries, since);
    // An invalidation on this replica since the write began: Redis may have the entry, memory must not.
    this.memory.keep(
      kept.map((entry) => ({ key: entry.key, value: entry.value, expiresAt: startedAt + entry.ttlMs, isPublic: entry.isPublic, indexes: entry.indexes })),
      memorySince,
    );
    return kept;
  }

  async invalidate(indexes: readonly string[], progress?: () => void): Promise<string[]> {
    this.invalidations++;
    this.memory.invalidateNow(indexes);
    const removed = await this.shared.invalidate(indexes, progress);
    // Again once Redis is cleared: an answer read from it meanwhile must not be reused either.
    this.invalidations++;
    // Keys Redis listed that the memory tier held under other indexes (an older write's).
    for (const key of removed) this.memory.delete(key);
    return removed;
  }

  /** Removes the memory entries listed under any of the indexes (another replica or worker invalidated them). */
  invalidateMemory(indexes: readonly string[]): number {
    this.invalidations++;
    return this.memory.invalidateNow(indexes).length;
  }

  /** Drops the whole memory tier (invalidations may have been missed); racing writes stay out of it. */
  clearMemory(): number {
    this.invalidations++;
    return this.memory.clear();
  }

  async close(): Promise<void> {
    await this.memory.close();
    await this.shared.close();
  }
}
