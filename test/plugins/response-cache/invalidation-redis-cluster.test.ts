import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../support/redis.js';
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
