import { afterAll, beforeAll } from 'vitest';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { invalidationSuite } from './invalidation-suite.js';

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

invalidationSuite('a Redis server', {
  async cache() {
    await redis.cli('FLUSHALL');
    return { enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } };
  },
  config: () => ({ storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } }),
  tagsFollowLatestWrite: false,
});
