import { Keyv, type DeserializedData } from 'keyv';
import { LRUCache } from 'lru-cache';
import type { JsonObject } from '../../../src/index.js';
import type { CacheStore, EntryWrite, StoredEntry, StoredValue } from './cache-store.js';
import { InvalidationMarks, MemoryIndex } from './memory-index.js';
import { readRows, toStoredValue } from './stored-value.js';

type Envelope = DeserializedData<StoredValue>;

/** Options of `MemoryCacheStore`. */
export interface MemoryStoreOptions {
  /** Entries kept; the least recently used is evicted beyond. */
  readonly maxEntries: number;
  /** How long an invalidation mark must be kept for writes racing it (longest possible fetch). */
  readonly markTtlMs: number;
  /**
   * Approximate bytes kept (key length plus the value's JSON length), the
   * least recently used evicted beyond; unbounded when absent. Measuring
   * costs one `JSON.stringify` per write (a miss: the answer came from a
   * subgraph just now).
   */
  readonly maxBytes?: number;
}

/** An entry kept until a given instant (the memory tier copies the shared store's expiry). */
export interface KeptEntry {
  readonly key: string;
  readonly value: JsonObject;
  /** When it expires (ms since the epoch); already past: not kept. */
  readonly expiresAt: number;
  readonly isPublic: boolean;
  readonly indexes: readonly string[];
}

/**
 * The memory provider: a keyv over an LRU map in this process (also the
 * memory tier's store, bounded by bytes there). Values are kept as objects
 * (no serialization), so a hit costs no parsing. Reads go through keyv;
 * writes put keyv's `{ value, expires }` envelope into the map themselves,
 * so that an entry can be given an absolute expiry (`keep`). Indexes list a
 * key under the indexes of its latest write only, and forget it when it is
 * evicted or expires.
 */
export class MemoryCacheStore implements CacheStore {
  readonly provider = 'memory' as const;
  private readonly lru: LRUCache<string, Envelope>;
  private readonly keyv: Keyv<StoredValue>;
  private readonly index = new MemoryIndex();
  private readonly marks: InvalidationMarks;
  /** Bumped by every write and every entry leaving (deleted, evicted, expired or replaced). */
  private changes = 0;

  constructor({ maxEntries, markTtlMs, maxBytes }: MemoryStoreOptions) {
    const index = this.index;
    this.lru = new LRUCache<string, Envelope>({
      max: maxEntries,
      ...(maxBytes === undefined ? {} : { maxSize: maxBytes, sizeCalculation: sizeOf }),
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
    return readRows(rows);
  }

  async epoch(): Promise<number> {
    return this.marks.epoch;
  }

  /** `epoch`, synchronously. */
  get currentEpoch(): number {
    return this.marks.epoch;
  }

  /** Removes one entry (not an invalidation: no mark is left); true when it was there. */
  delete(key: string): boolean {
    return this.lru.delete(key);
  }

  async write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    const now = Date.now();
    const kept = this.keep(
      entries.map((entry) => ({ key: entry.key, value: entry.value, expiresAt: now + entry.ttlMs, isPublic: entry.isPublic, indexes: entry.indexes })),
      since,
    );
    const keptKeys = new Set(kept.map((entry) => entry.key));
    return entries.filter((entry) => keptKeys.has(entry.key));
  }

  /**
   * Stores entries until their own expiry (`write` with absolute instants;
   * the memory tier keeps shared-store entries no longer than the shared
   * store does). With `since`, an entry listed under an index invalidated
   * after that epoch is dropped. Returns the entries that stayed.
   */
  keep(entries: readonly KeptEntry[], since: number | undefined): KeptEntry[] {
    this.changes++;
    const now = Date.now();
    const kept: KeptEntry[] = [];
    for (const entry of entries) {
      const ttl = entry.expiresAt - now;
      if (ttl <= 0) continue;
      // keyv's envelope, as `keyv.set` would store it: reads go through keyv, which checks `expires`.
      this.lru.set(entry.key, { value: toStoredValue(entry), expires: entry.expiresAt }, { ttl });
      // Written first, checked after: an invalidation that began before the check either
      // marked the index (the entry is dropped here) or will find the entry listed.
      if (since !== undefined && this.marks.touchedSince(entry.indexes, since)) {
        this.lru.delete(entry.key);
        continue;
      }
      // Not there: larger than `maxBytes` by itself (lru-cache refuses it).
      if (this.lru.has(entry.key)) this.index.set(entry.key, entry.indexes);
      kept.push(entry);
    }
    return kept;
  }

  async invalidate(indexes: readonly string[]): Promise<string[]> {
    return this.invalidateNow(indexes);
  }

  /** `invalidate`, synchronously (the memory tier applies other replicas' invalidations with it). */
  invalidateNow(indexes: readonly string[]): string[] {
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

  /** Entries kept now. */
  get size(): number {
    return this.lru.size;
  }

  /** Approximate bytes kept now (0 without `maxBytes`). */
  get bytes(): number {
    return this.lru.calculatedSize;
  }
}

/** Approximate size of an entry: its key and the JSON of its value (at least 1, as lru-cache requires). */
function sizeOf(envelope: Envelope, key: string): number {
  return Math.max(1, key.length + JSON.stringify(envelope.value?.d ?? null).length);
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
