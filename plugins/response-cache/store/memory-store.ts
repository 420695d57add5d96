import { Keyv, type DeserializedData } from 'keyv';
import { LRUCache } from 'lru-cache';
import type { CacheStore, EntryWrite, StoredEntry, StoredValue } from './cache-store.js';
import { InvalidationMarks, MemoryIndex } from './memory-index.js';
import { toStoredEntry, toStoredValue } from './stored-value.js';

type Envelope = DeserializedData<StoredValue>;

/** Options of `MemoryCacheStore`. */
export interface MemoryStoreOptions {
  /** Entries kept; the least recently used is evicted beyond. */
  readonly maxEntries: number;
  /** How long an invalidation mark must be kept for writes racing it (longest possible fetch). */
  readonly markTtlMs: number;
}

/**
 * The memory provider: a keyv over an LRU map in this process. Values are
 * kept as objects (no serialization), so a hit costs no parsing. Indexes
 * list a key under the indexes of its latest write only, and forget it
 * when it is evicted or expires.
 */
export class MemoryCacheStore implements CacheStore {
  readonly provider = 'memory' as const;
  private readonly lru: LRUCache<string, Envelope>;
  private readonly keyv: Keyv<StoredValue>;
  private readonly index = new MemoryIndex();
  private readonly marks: InvalidationMarks;
  /** Bumped by every write and every entry leaving (deleted, evicted, expired or replaced). */
  private changes = 0;

  constructor({ maxEntries, markTtlMs }: MemoryStoreOptions) {
    const index = this.index;
    this.lru = new LRUCache<string, Envelope>({
      max: maxEntries,
      dispose: (_value, key) => {
        this.changes++;
        index.remove(key);
      },
    });
    this.keyv = new Keyv<StoredValue>({
      store: new LruAdapter(this.lru),
      namespace: undefined,
      useKeyPrefix: false,
      serialize: undefined,
      deserialize: undefined,
      throwOnErrors: true,
    });
    this.marks = new InvalidationMarks(markTtlMs);
  }

  version(): number {
    return this.changes;
  }

  async getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>> {
    const rows = await this.keyv.getManyRaw([...keys]);
    return rows.map(toStoredEntry);
  }

  async epoch(): Promise<number> {
    return this.marks.epoch;
  }

  async write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    this.changes++;
    await this.keyv.setMany(entries.map((entry) => ({ key: entry.key, value: toStoredValue(entry), ttl: entry.ttlMs })));
    const kept: EntryWrite[] = [];
    for (const entry of entries) {
      // Written first, checked after: an invalidation that began before the check either
      // marked the index (the entry is dropped here) or will find the entry listed.
      if (since !== undefined && this.marks.touchedSince(entry.indexes, since)) {
        this.lru.delete(entry.key);
        continue;
      }
      if (this.lru.has(entry.key)) this.index.set(entry.key, entry.indexes);
      kept.push(entry);
    }
    return kept;
  }

  async invalidate(indexes: readonly string[]): Promise<string[]> {
    this.marks.bump(indexes);
    const removed: string[] = [];
    for (const key of this.index.keysOf(indexes)) {
      // `has` is false for an expired entry: it is gone already, not removed now.
      if (this.lru.has(key)) removed.push(key);
      this.lru.delete(key);
    }
    return removed;
  }

  /**
   * Drops every entry (a replica that may have missed broadcast invalidations);
   * writes of fetches that started before are dropped too.
   */
  clear(): number {
    this.marks.bumpAll();
    const count = this.lru.size;
    this.lru.clear();
    return count;
  }

  async close(): Promise<void> {
    this.lru.clear();
  }

  /** Index ids in use (tests check that indexes do not outgrow their entries). */
  get indexCount(): number {
    return this.index.size;
  }
}

/** keyv storage adapter over an LRU map that honours keyv's TTL. */
class LruAdapter {
  namespace: string | undefined;

  constructor(private readonly lru: LRUCache<string, Envelope>) {}

  get(key: string): Envelope | undefined {
    return this.lru.get(key);
  }

  getMany(keys: string[]): Array<Envelope | undefined> {
    return keys.map((key) => this.lru.get(key));
  }

  set(key: string, value: Envelope, ttl?: number): boolean {
    this.lru.set(key, value, ttl ? { ttl } : undefined);
    return true;
  }

  delete(key: string): boolean {
    return this.lru.delete(key);
  }

  has(key: string): boolean {
    return this.lru.has(key);
  }

  clear(): void {
    this.lru.clear();
  }
}
