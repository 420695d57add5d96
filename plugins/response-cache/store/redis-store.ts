import { CACHE_KEY_VERSION } from '../cache-key.js';
import type { CacheStore, EntryWrite, StoredEntry } from './cache-store.js';
import type { RedisConnection } from './redis-connection.js';
import { readRows, toStoredValue, type UnreadableKind } from './stored-value.js';

/** Options of `RedisCacheStore`. */
export interface RedisStoreOptions {
  /** `key_prefix`, on every key this store touches. */
  readonly keyPrefix: string;
  /** How long an invalidation mark is kept for writes racing it (longest possible fetch). */
  readonly markTtlMs: number;
  /** Keep each entry's index ids in its value (`memory_tier`: other replicas' tiers need them). Default: false. */
  readonly keepIndexes?: boolean;
  /** Told of each entry read as a miss because it is of another format or shape (`stored-value.ts`). Default: none. */
  readonly unreadable?: (key: string, kind: UnreadableKind, reason: string) => void;
}

/**
 * Bumps the epoch and marks every index with it, atomically, so marks only
 * grow. KEYS[1] is the epoch, the rest are marks; all share one hash slot.
 */
const MARK_SCRIPT = `
local epoch = redis.call('INCR', KEYS[1])
for i = 2, #KEYS do redis.call('SET', KEYS[i], epoch, 'PX', ARGV[1]) end
return epoch`;

/** Keys removed per batch of DEL commands. */
const DELETE_BATCH = 500;

/**
 * The shared-store provider (Redis 7.0+). Entry values go through keyv with
 * a TTL; each index is a sorted set of keys scored by their expiry, so an
 * index forgets expired entries and expires itself with its last entry.
 * An entry re-cached under other tags stays listed under the old ones until
 * it expires (invalidating an old tag still removes it).
 *
 * Key layout (`<p>` = `key_prefix`):
 * - `<p>v1:root:…`, `<p>v1:entity:…` entries (`cache-key.ts`), values in format `STORED_VALUE_FORMAT` (`stored-value.ts`)
 * - `<p>v1:index:<index id>` sorted sets of entry keys
 * - `<p>v1:{guard}:epoch` and `<p>v1:{guard}:mark:<index id>` invalidation epochs (one hash slot)
 */
export class RedisCacheStore implements CacheStore {
  readonly provider = 'sharedstore' as const;
  private readonly base: string;

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: RedisStoreOptions,
  ) {
    this.base = `${options.keyPrefix}${CACHE_KEY_VERSION}:`;
  }

  async getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>> {
    const rows = await this.connection.keyv.getManyRaw([...keys]);
    const report = this.options.unreadable;
    return readRows(rows, report && ((position, kind, reason) => report(keys[position]!, kind, reason)));
  }

  async epoch(): Promise<number> {
    return Number(await this.connection.commands.get(this.epochKey())) || 0;
  }

  async write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    if (entries.length === 0) return [];
    const { keyv, commands } = this.connection;
    await keyv.setMany(entries.map((entry) => ({ key: entry.key, value: toStoredValue(entry, this.options.keepIndexes), ttl: entry.ttlMs })));
    const now = Date.now();
    const byIndex = new Map<string, { members: Array<{ score: number; value: string }>; expiresAt: number }>();
    for (const entry of entries) {
      const expiresAt = now + entry.ttlMs;
      for (const id of entry.indexes) {
        const listing = byIndex.get(id);
        if (listing) {
          listing.members.push({ score: expiresAt, value: entry.key });
          listing.expiresAt = Math.max(listing.expiresAt, expiresAt);
        } else {
          byIndex.set(id, { members: [{ score: expiresAt, value: entry.key }], expiresAt });
        }
      }
    }
    await Promise.all(
      [...byIndex].map(([id, { members, expiresAt }]) => {
        const key = this.indexKey(id);
        return Promise.all([
          commands.zAdd(key, members),
          commands.zRemRangeByScore(key, '-inf', now),
          // NX sets the first expiry, GT only ever extends it: the index outlives none of its entries.
          commands.pExpireAt(key, expiresAt, 'NX'),
          commands.pExpireAt(key, expiresAt, 'GT'),
        ]);
      }),
    );
    if (since === undefined || byIndex.size === 0) return [...entries];
    // Written first, checked after: an invalidation that began before this check either
    // marked an index (the entry is removed here) or will find the entry listed.
    const ids = [...byIndex.keys()];
    const marks = await commands.mGet(ids.map((id) => this.markKey(id)));
    const touched = new Set(ids.filter((_, i) => Number(marks[i] ?? 0) > since));
    if (touched.size === 0) return [...entries];
    const kept: EntryWrite[] = [];
    const dropped: string[] = [];
    for (const entry of entries) {
      if (entry.indexes.some((id) => touched.has(id))) dropped.push(entry.key);
      else kept.push(entry);
    }
    await this.deleteKeys(dropped);
    return kept;
  }

  async invalidate(indexes: readonly string[], progress: () => void = () => undefined): Promise<string[]> {
    if (indexes.length === 0) return [];
    const { commands } = this.connection;
    // Each answer is reported, so a caller's deadline measures silence rather than the whole (possibly long) removal.
    const answered = <T>(reply: T): T => {
      progress();
      return reply;
    };
    await commands
      .eval(MARK_SCRIPT, {
        keys: [this.epochKey(), ...indexes.map((id) => this.markKey(id))],
        arguments: [String(this.options.markTtlMs)],
      })
      .then(answered);
    const now = Date.now();
    const listed = await Promise.all(indexes.map((id) => commands.zRangeByScore(this.indexKey(id), now, '+inf').then(answered)));
    const removed = await this.deleteKeys([...new Set(listed.flat())], progress);
    // Only the members read are unlisted: a key listed meanwhile stays listed.
    await Promise.all(indexes.map((id, i) => (listed[i]!.length > 0 ? commands.zRem(this.indexKey(id), listed[i]!).then(answered) : 0)));
    return removed;
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** Deletes keys one command each (cluster-safe; the client pipelines them); resolves with those that existed. `progress` after each batch. */
  private async deleteKeys(keys: readonly string[], progress?: () => void): Promise<string[]> {
    const removed: string[] = [];
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const batch = keys.slice(start, start + DELETE_BATCH);
      const results = await Promise.all(batch.map((key) => this.connection.commands.del(key)));
      progress?.();
      results.forEach((count, i) => {
        if (count > 0) removed.push(batch[i]!);
      });
    }
    return removed;
  }

  private indexKey(id: string): string {
    return `${this.base}index:${id}`;
  }

  private epochKey(): string {
    return `${this.base}{guard}:epoch`;
  }

  private markKey(id: string): string {
    return `${this.base}{guard}:mark:${id}`;
  }
}
