/**
 * `response_cache.memory_tier`: an in-process tier in front of a real
 * redis-server. A memory hit sends Redis no command (INFO commandstats);
 * memory entries never outlive their Redis TTL; invalidations clear both
 * tiers, and other replicas' memory tiers through the broadcast.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { responseCacheOptionsSchema, type ResponseCacheOptions } from '../../../plugins/response-cache/index.js';
import type { CacheStore, EntryWrite, StoredEntry } from '../../../plugins/response-cache/store/cache-store.js';
import { TieredCacheStore } from '../../../plugins/response-cache/store/tiered-store.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { type CacheGraph, sleep, useCacheGraph, INVALIDATION_ENDPOINT, type InvalidatingRouter, startWithInvalidationEndpoint } from './fixtures.js';

const QUERY = 'query Top($first: Int) { products(first: $first) { upc name reviews { body } } }';

let graph: CacheGraph;
let redis: RedisServer;
useCacheGraph((started) => (graph = started));

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
beforeEach(async () => {
  await redis.cli('FLUSHALL');
});

type Replica = InvalidatingRouter;

let replicas: Replica[] = [];
afterEach(async () => {
  await Promise.all(replicas.map((replica) => replica.router.close()));
  replicas = [];
});

async function replica(extra: Partial<ResponseCacheOptions> = {}, broadcast = false): Promise<Replica> {
  const started = await startWithInvalidationEndpoint((logger) =>
    graph.router({
      cache: {
        enabled: true,
        storage: { provider: 'sharedstore', provider_id: 'main' },
        memory_tier: { enabled: true },
        invalidation: {
          endpoint: INVALIDATION_ENDPOINT,
          broadcast: { enabled: broadcast, provider_id: broadcast ? 'main' : undefined },
        },
        ...extra,
      },
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
      logger,
    }),
  );
  replicas.push(started);
  return started;
}

async function firstProduct(router: TestRouter): Promise<{ name: string; review: string }> {
  const answer = await router.query({ query: QUERY, variables: { first: 2 } });
  const product = (answer.body as { data: { products: Array<{ name: string; reviews: Array<{ body: string }> }> } }).data.products[0]!;
  return { name: product.name, review: product.reviews[0]!.body };
}

/** Commands Redis ran since the last `CONFIG RESETSTAT`, by name, without the test's own. */
async function commandsSinceReset(): Promise<Record<string, number>> {
  const info = await redis.cli('INFO', 'commandstats');
  const counts: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (match[1] === 'info' || match[1] === 'config|resetstat') continue;
    counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

describe('the memory tier in front of Redis', () => {
  it('answers a repeated request without any Redis command', async () => {
    const { router } = await replica();
    await firstProduct(router);
    await firstProduct(router);
    expect(graph.products.calls).toHaveLength(1);
    await redis.cli('CONFIG', 'RESETSTAT');
    for (let i = 0; i < 5; i++) expect(await firstProduct(router)).toEqual({ name: 'Table', review: 'Love it!' });
    expect(await commandsSinceReset()).toEqual({});
    expect(graph.products.calls).toHaveLength(1);
  });

  it('still writes to Redis, so a replica without the entry in memory reads it there (and keeps it)', async () => {
    const one = await replica();
    const two = await replica();
    await firstProduct(one.router);
    await redis.cli('CONFIG', 'RESETSTAT');
    await firstProduct(two.router);
    expect(graph.products.calls).toHaveLength(1);
    expect((await commandsSinceReset()).mget).toBeGreaterThanOrEqual(1);
    await redis.cli('CONFIG', 'RESETSTAT');
    await firstProduct(two.router);
    expect(await commandsSinceReset()).toEqual({});
  });

  it('never keeps an entry past its Redis TTL, also one read from Redis late in its life', async () => {
    graph.reply.products.cacheControl = 'max-age=2';
    graph.reply.reviews.cacheControl = 'max-age=2';
    const one = await replica();
    const two = await replica();
    await firstProduct(one.router);
    await sleep(1200);
    // Replica two reads the entries from Redis with under a second left: it keeps them for that second only.
    await firstProduct(two.router);
    expect(graph.products.calls).toHaveLength(1);
    const rootKey = (await redis.cli('KEYS', 'router_response_cache:v1:root:*')).split('\n')[0]!;
    expect(Number(await redis.cli('PTTL', rootKey))).toBeLessThanOrEqual(1000);
    await sleep(1000);
    expect(await redis.cli('EXISTS', rootKey)).toBe('0');
    graph.data.products.get('p1')!.name = 'Desk';
    expect((await firstProduct(two.router)).name).toBe('Desk');
    expect((await firstProduct(one.router)).name).toBe('Desk');
  });

  it('clears both tiers on an invalidation', async () => {
    const { router, invalidate } = await replica();
    await firstProduct(router);
    await firstProduct(router);
    graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    expect((await firstProduct(router)).review).toBe('Love it!');
    expect(await invalidate([{ kind: 'type', subgraph: 'reviews', type: 'Product' }])).toEqual({ status: 202, body: { count: 2 } });
    expect(await redis.cli('KEYS', 'router_response_cache:v1:entity:*')).toBe('');
    expect((await firstProduct(router)).review).toBe('Changed my mind.');
  });

  it('with the broadcast, an invalidation clears the memory tier of every replica', async () => {
    const [one, two] = await Promise.all([replica({}, true), replica({}, true)]);
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && (await redis.cli('PUBSUB', 'NUMSUB', 'router_response_cache:invalidations')).split('\n')[1] !== '2') await sleep(20);
    await firstProduct(one.router);
    await firstProduct(two.router);
    await firstProduct(two.router);
    graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    expect((await firstProduct(two.router)).review).toBe('Love it!');
    expect((await one.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).status).toBe(202);
    let fresh = false;
    for (let i = 0; i < 50 && !fresh; i++) {
      fresh = (await firstProduct(two.router)).review === 'Changed my mind.';
      if (!fresh) await sleep(20);
    }
    expect(fresh).toBe(true);
  });

  it('without the broadcast, warns that other replicas keep their memory tier until it expires', async () => {
    const { lines } = await replica();
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringContaining('memory_tier without invalidation.broadcast') }));
  });
});

describe('memory_tier options', () => {
  it('defaults to off and 64MB, and needs the sharedstore provider', () => {
    const parsed = responseCacheOptionsSchema.parse({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } });
    expect(parsed.memory_tier).toEqual({ enabled: false, max_size: 64_000_000, max_entries: 10_000 });
    const refused = responseCacheOptionsSchema.safeParse({ enabled: true, storage: { provider: 'memory' }, memory_tier: { enabled: true } });
    expect(refused.success).toBe(false);
    expect(JSON.stringify(refused.error?.issues)).toContain('needs storage.provider: sharedstore');
  });
});

describe('TieredCacheStore', () => {
  /** A shared store in a map, counting its reads. */
  function sharedMap(): CacheStore & { reads: number } {
    const entries = new Map<string, StoredEntry>();
    const store = {
      provider: 'sharedstore' as const,
      reads: 0,
      async getMany(keys: readonly string[]) {
        store.reads++;
        return keys.map((key) => entries.get(key));
      },
      epoch: async () => 0,
      async write(list: readonly EntryWrite[]) {
        for (const entry of list) entries.set(entry.key, { value: entry.value, expiresAt: Date.now() + entry.ttlMs, isPublic: entry.isPublic, indexes: entry.indexes });
        return [...list];
      },
      async invalidate() {
        return [];
      },
      close: async () => undefined,
    };
    return store;
  }

  const write = (key: string, size: number): EntryWrite => ({ key, value: { text: 'x'.repeat(size) }, ttlMs: 60_000, isPublic: false, indexes: ['subgraph:s'] });

  it('stays within max_size bytes and max_entries, evicting the least recently used', async () => {
    const shared = sharedMap();
    const tier = new TieredCacheStore(shared, { maxBytes: 4096, maxEntries: 1000, markTtlMs: 60_000 });
    for (let i = 0; i < 20; i++) await tier.write([write(`k${i}`, 500)], undefined);
    expect(tier.memoryBytes).toBeLessThanOrEqual(4096);
    expect(tier.memorySize).toBeLessThan(20);
    // The evicted ones are read from the shared store, the kept ones are not.
    shared.reads = 0;
    await tier.getMany(['k19']);
    expect(shared.reads).toBe(0);
    await tier.getMany(['k0']);
    expect(shared.reads).toBe(1);

    const few = new TieredCacheStore(sharedMap(), { maxBytes: 1 << 20, maxEntries: 3, markTtlMs: 60_000 });
    for (let i = 0; i < 10; i++) await few.write([write(`k${i}`, 10)], undefined);
    expect(few.memorySize).toBe(3);
  });

  it('serves what memory holds when the shared store fails, and passes the failure on when memory holds nothing', async () => {
    const shared = sharedMap();
    const tier = new TieredCacheStore(shared, { maxBytes: 1 << 20, maxEntries: 100, markTtlMs: 60_000 });
    await tier.write([write('a', 10)], undefined);
    shared.getMany = () => Promise.reject(new Error('down'));
    const [a, b] = await tier.getMany(['a', 'b']);
    expect(a?.value).toEqual({ text: 'x'.repeat(10) });
    expect(b).toBeUndefined();
    await expect(tier.getMany(['b'])).rejects.toThrow('down');
  });

  it('keeps a racing write out of memory when its index was invalidated meanwhile', async () => {
    const shared = sharedMap();
    let release!: () => void;
    const inner = shared.write.bind(shared);
    shared.write = async (list) => {
      await new Promise<void>((resolve) => (release = resolve));
      return inner(list, undefined);
    };
    const tier = new TieredCacheStore(shared, { maxBytes: 1 << 20, maxEntries: 100, markTtlMs: 60_000 });
    const writing = tier.write([write('a', 10)], undefined);
    tier.invalidateMemory(['subgraph:s']);
    release();
    await writing;
    expect(tier.memorySize).toBe(0);
  });

  it('changes its version with memory and with every invalidation, so an all-hit answer is reused only while both stay', async () => {
    const shared = sharedMap();
    const tier = new TieredCacheStore(shared, { maxBytes: 1 << 20, maxEntries: 100, markTtlMs: 60_000 });
    const start = tier.version();
    await tier.write([write('a', 10)], undefined);
    const written = tier.version();
    expect(written).not.toBe(start);
    await tier.getMany(['a']);
    expect(tier.version()).toBe(written);
    // An invalidation of entries this replica does not hold in memory still counts: one may have been served from Redis.
    tier.invalidateMemory(['subgraph:other']);
    expect(tier.version()).not.toBe(written);
    const before = tier.version();
    tier.clearMemory();
    expect(tier.version()).not.toBe(before);
  });
});
