/**
 * A router caching in a real redis-server, for the tests of what happens when
 * that store fails at run time (killed, frozen, returning junk).
 */
import { afterAll, beforeAll } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { capturingLogger, startCacheGraph, type CacheGraph } from './fixtures.js';

export interface RedisBackedRouter {
  readonly graph: CacheGraph;
  readonly redis: RedisServer;
  readonly router: TestRouter;
  /** What the router logged (level info and above). */
  readonly logs: ReturnType<typeof capturingLogger>;
}

/**
 * Starts the cache graph, a redis-server and a router caching there (shared
 * store `main`) before the calling file's tests, and stops them after.
 * The circuit breaker's cool-down is 1 s: recovery once Redis is back is
 * what these tests check, not the default wait.
 */
export function useRedisBackedRouter(started: (setup: RedisBackedRouter) => void): void {
  let setup: Partial<RedisBackedRouter> = {};
  beforeAll(async () => {
    const [graph, redis] = await Promise.all([startCacheGraph(), startRedis()]);
    setup = { graph, redis };
    const logs = capturingLogger('info');
    const router = await graph.router({
      cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' }, circuit_breaker: { cool_down: '1s' } },
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
      logger: logs.logger,
    });
    setup = { graph, redis, router, logs };
    started(setup as RedisBackedRouter);
  });
  afterAll(async () => {
    await setup.router?.close();
    await Promise.all([setup.graph?.close(), setup.redis?.stop()]);
  });
}
