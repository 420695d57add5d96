/**
 * `response_cache.memory_tier` over a Redis Cluster: a memory hit sends no
 * command to any node, and an invalidation clears both tiers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../support/redis.js';
import { SHARED_KEY, capturingLogger, startCacheGraph } from './fixtures.js';

let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
});

afterAll(async () => {
  await cluster?.stop();
});

/** Commands every node ran since `CONFIG RESETSTAT`, without the test's own. */
async function commandsOnNodes(): Promise<number> {
  let total = 0;
  for (const node of cluster.nodes) {
    const info = await node.cli('INFO', 'commandstats');
    for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      if (match[1] === 'info' || match[1] === 'config|resetstat') continue;
      total += Number(match[2]);
    }
  }
  return total;
}

describe('the memory tier over a Redis Cluster', () => {
  it('answers repeated requests without any command to any node, and invalidation clears both tiers', async () => {
    await Promise.all(cluster.nodes.map((node) => node.cli('FLUSHALL')));
    const graph = await startCacheGraph();
    const { logger, lines } = capturingLogger('info');
    const router = await graph.router({
      cache: {
        enabled: true,
        storage: { provider: 'sharedstore', provider_id: 'cluster' },
        memory_tier: { enabled: true },
        invalidation: { endpoint: { enabled: true, listen_addr: '127.0.0.1:0', shared_key: SHARED_KEY } },
      },
      config: { storage_providers: { sharedstore: [{ id: 'cluster', cluster_enabled: true, urls: [...cluster.urls] }] } },
      logger,
    });
    try {
      const queries = ['p1', 'p2', 'p3'].map((upc) => `{ product(upc: "${upc}") { upc reviews { body } } }`);
      for (const query of queries) await router.query(query);
      await Promise.all(cluster.nodes.map((node) => node.cli('CONFIG', 'RESETSTAT')));
      for (let round = 0; round < 3; round++) for (const query of queries) expect((await router.query(query)).body.errors).toBeUndefined();
      expect(await commandsOnNodes()).toBe(0);
      expect(graph.products.calls).toHaveLength(3);

      graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
      const listening = lines.find((line) => line.msg === 'Invalidation endpoint listening');
      const response = await fetch(`http://${String(listening?.listen_addr)}${String(listening?.path)}`, {
        method: 'POST',
        headers: { authorization: SHARED_KEY, 'content-type': 'application/json' },
        body: JSON.stringify([{ kind: 'type', subgraph: 'reviews', type: 'Product' }]),
      });
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ count: 3 });
      const answer = (await router.query(queries[0]!)).body as { data: { product: { reviews: Array<{ body: string }> } } };
      expect(answer.data.product.reviews[0]!.body).toBe('Changed my mind.');
    } finally {
      await router.close();
      await graph.close();
    }
  }, 30_000);
});
