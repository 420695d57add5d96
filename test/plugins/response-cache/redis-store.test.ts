import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { representationsOf, startCacheGraph, type CacheGraph } from './fixtures.js';

let graph: CacheGraph;
let redis: RedisServer;

beforeAll(async () => {
  [graph, redis] = await Promise.all([startCacheGraph(), startRedis()]);
});

afterAll(async () => {
  await Promise.all([graph?.close(), redis?.stop()]);
});

beforeEach(async () => {
  graph.reset();
  await redis.cli('FLUSHALL');
});

const config = () => ({ storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } });
const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';

describe('the shared store provider on Redis', () => {
  it('shares entries between router replicas', async () => {
    const cache = { enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } } as const;
    const [one, two] = await Promise.all([graph.router({ cache, config: config() }), graph.router({ cache, config: config() })]);
    try {
      const first = await one.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      const second = await two.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      expect(second.body).toEqual(first.body);
      expect(graph.products.calls).toHaveLength(1);
      expect(graph.reviews.calls).toHaveLength(1);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('puts key_prefix on every key, indexes no empty tag, and every index expires with its entries', async () => {
    graph.reply.products.cacheControl = 'max-age=30';
    graph.reply.reviews.cacheControl = 'max-age=60';
    // An empty tag cannot be invalidated (the endpoint refuses it), so it gets no index.
    graph.reply.products.extensions = () => ({ cacheTags: [''] });
    graph.reply.reviews.extensions = (call) => ({ entityCacheTags: representationsOf(call).map((r) => [`product:${String(r.upc)}`, '']) });
    const router = await graph.router({ cache: { enabled: true, key_prefix: 'shop-a:', storage: { provider: 'sharedstore', provider_id: 'main' } }, config: config() });
    try {
      await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      const keys = (await redis.cli('KEYS', '*')).split('\n').sort();
      expect(keys.every((key) => key.startsWith('shop-a:v1:'))).toBe(true);
      const indexes = keys.filter((key) => key.startsWith('shop-a:v1:index:'));
      expect(indexes).toEqual([
        'shop-a:v1:index:subgraph:products',
        'shop-a:v1:index:subgraph:reviews',
        'shop-a:v1:index:tag:reviews:product:p1',
        'shop-a:v1:index:tag:reviews:product:p2',
        'shop-a:v1:index:type:reviews:Product',
      ]);
      expect(keys.filter((key) => key.startsWith('shop-a:v1:entity:reviews:Product:'))).toHaveLength(2);
      expect(keys.filter((key) => key.startsWith('shop-a:v1:root:products:'))).toHaveLength(1);
      for (const key of indexes) {
        const ttl = Number(await redis.cli('PTTL', key));
        const lifetime = key.includes(':products') ? 30_000 : 60_000;
        expect(ttl).toBeGreaterThan(lifetime - 5000);
        expect(ttl).toBeLessThanOrEqual(lifetime);
      }
    } finally {
      await router.close();
    }
  });
});
