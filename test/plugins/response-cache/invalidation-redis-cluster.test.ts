import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../support/redis.js';
import { startCacheGraph } from './fixtures.js';
import { invalidationSuite } from './invalidation-suite.js';

let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
});

afterAll(async () => {
  await cluster?.stop();
});

invalidationSuite('a Redis Cluster (cluster_enabled)', {
  async cache() {
    await Promise.all(cluster.nodes.map((node) => node.cli('FLUSHALL')));
    return { enabled: true, storage: { provider: 'sharedstore', provider_id: 'cluster' } };
  },
  config: () => ({ storage_providers: { sharedstore: [{ id: 'cluster', cluster_enabled: true, urls: [...cluster.urls] }] } }),
  tagsFollowLatestWrite: false,
});

describe('the shared store provider on a Redis Cluster', () => {
  it('spreads entries over the nodes and serves them back', async () => {
    await Promise.all(cluster.nodes.map((node) => node.cli('FLUSHALL')));
    const graph = await startCacheGraph();
    const router = await graph.router({
      cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'cluster' } },
      config: { storage_providers: { sharedstore: [{ id: 'cluster', cluster_enabled: true, urls: [cluster.urls[0]!] }] } },
    });
    try {
      const queries = ['p1', 'p2', 'p3'].map((upc) => `{ product(upc: "${upc}") { upc reviews { body } } }`);
      for (const query of queries) await router.query(query);
      const sizes = await Promise.all(cluster.nodes.map(async (node) => Number(await node.cli('DBSIZE'))));
      expect(sizes.filter((size) => size > 0).length).toBeGreaterThan(1);
      for (const query of queries) expect((await router.query(query)).body.errors).toBeUndefined();
      expect(graph.products.calls).toHaveLength(3);
      expect(graph.reviews.calls).toHaveLength(3);
    } finally {
      await router.close();
      await graph.close();
    }
  });
});
