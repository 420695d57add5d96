import { LRUCache } from 'lru-cache';
import type { CacheStore, EntryWrite, StoredEntry } from './cache-store.js';
import { InvalidationMarks, MemoryIndex } from './memory-index.js';

/** Options of `TieredCacheStore` (`response_cache.memory_tier`). */
export interface MemoryTierOptions {
  /** Approximate bytes of entries kept (key plus JSON length of the value). */
  readonly maxBytes: number;
  /** Entries kept. */
  readonly maxEntries: number;
  /** How long an invalidation mark is kept for writes racing it (longest possible fetch). */
  readonly markTtlMs: number;
}

interface TierEntry {
  readonly entry: StoredEntry;
  readonly size: number;
}

/** Read results answered without the shared store (it was not asked, or failed): they say nothing of its health. */
const fromMemoryOnly = new WeakSet<object>();

/** Whether a `getMany` result came from a memory tier alone (so the shared store's health is unknown from it). */
export function answeredFromMemory(entries: readonly unknown[]): boolean {
  return fromMemoryOnly.has(entries);
}

/**
 * An in-process memory tier in front of the shared store. A read is
 * answered from memory when every key is there; otherwise the keys missing
 * from memory are read from the shared store and what it has is kept in
 * memory until the expiry the shared store reports. Writes go to the shared
 * store first and then to memory with an expiry computed before the shared
 * write, so a memory entry never outlives its Redis entry.
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
  private readonly lru: LRUCache<string, TierEntry>;
  private readonly index = new MemoryIndex();
  private readonly marks: InvalidationMarks;

  constructor(
    private readonly shared: CacheStore,
    options: MemoryTierOptions,
  ) {
    const index = this.index;
    this.lru = new LRUCache<string, TierEntry>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      sizeCalculation: (value) => Math.max(1, value.size),
      dispose: (_value, key) => index.remove(key),
    });
    this.marks = new InvalidationMarks(options.markTtlMs);
  }

  /** Entries in the memory tier now (tests). */
  get memorySize(): number {
    return this.lru.size;
  }

  /** Approximate bytes in the memory tier now (tests). */
  get memoryBytes(): number {
    return this.lru.calculatedSize;
  }

  async getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>> {
    const now = Date.now();
    const found: Array<StoredEntry | undefined> = keys.map((key) => {
      const kept = this.lru.get(key);
      if (!kept) return undefined;
      if (kept.entry.expiresAt <= now) {
        this.lru.delete(key);
        return undefined;
      }
      return kept.entry;
    });
    const missing: number[] = [];
    found.forEach((entry, i) => {
      if (!entry) missing.push(i);
    });
    if (missing.length === 0) {
      fromMemoryOnly.add(found);
      return found;
    }
    const epoch = this.marks.epoch;
    let fetched: Array<StoredEntry | undefined>;
    try {
      fetched = await this.shared.getMany(missing.map((i) => keys[i]!));
    } catch (error) {
      if (missing.length === keys.length) throw error;
      fromMemoryOnly.add(found);
      return found;
    }
    // Entries read before an invalidation that ran meanwhile are served to this request but not kept.
    const keep = this.marks.epoch === epoch;
    missing.forEach((position, i) => {
      const entry = fetched[i];
      if (!entry) return;
      found[position] = entry;
      if (keep) this.remember(keys[position]!, entry, undefined);
    });
    return found;
  }

  epoch(): Promise<number> {
    return this.shared.epoch();
  }

  async write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    const startedAt = Date.now();
    const epoch = this.marks.epoch;
    const kept = await this.shared.write(entries, since);
    for (const entry of kept) {
      // An invalidation on this replica since the write began: Redis may have the entry, memory must not.
      if (this.marks.touchedSince(entry.indexes, epoch)) continue;
      this.remember(entry.key, { value: entry.value, expiresAt: startedAt + entry.ttlMs, isPublic: entry.isPublic }, entry.indexes);
    }
    return kept;
  }

  async invalidate(indexes: readonly string[]): Promise<string[]> {
    this.invalidateMemory(indexes);
    const removed = await this.shared.invalidate(indexes);
    for (const key of removed) this.lru.delete(key);
    return removed;
  }

  /** Removes the memory entries listed under any of the indexes (another replica or worker invalidated them). */
  invalidateMemory(indexes: readonly string[]): number {
    this.marks.bump(indexes);
    let removed = 0;
    for (const key of this.index.keysOf(indexes)) if (this.lru.delete(key)) removed++;
    return removed;
  }

  /** Drops the whole memory tier (invalidations may have been missed); racing writes stay out of it. */
  clearMemory(): number {
    this.marks.bumpAll();
    const count = this.lru.size;
    this.lru.clear();
    return count;
  }

  async close(): Promise<void> {
    this.lru.clear();
    await this.shared.close();
  }

  /**
   * Keeps an entry in memory until its expiry, listed under its indexes (a
   * write's own, or those stored with the value in Redis). An entry read
   * without indexes (written by a replica without the memory tier) is not
   * kept: an invalidation from another replica could not find it.
   */
  private remember(key: string, entry: StoredEntry, indexes: readonly string[] | undefined): void {
    const listed = indexes ?? entry.indexes;
    if (!listed) return;
    const ttl = entry.expiresAt - Date.now();
    if (ttl <= 0) return;
    const size = key.length + JSON.stringify(entry.value).length;
    this.lru.set(key, { entry, size }, { ttl });
    if (this.lru.has(key)) this.index.set(key, listed);
  }
}
