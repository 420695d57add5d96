/**
 * The write-during-invalidation race: an answer read before an invalidation
 * but written after it must not survive it (`guard_concurrent_writes`).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CoreConfigInput } from '../../../src/index.js';
import type { ResponseCacheOptions } from '../../../plugins/response-cache/index.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { memoryCache, sleep, startCacheGraph, type CacheGraph } from './fixtures.js';
import { startInvalidatingRouter, type InvalidatingRouter } from './invalidation-suite.js';

let graph: CacheGraph;
let redis: RedisServer;

beforeAll(async () => {
  [graph, redis] = await Promise.all([startCacheGraph(), startRedis()]);
});

afterAll(async () => {
  await Promise.all([graph?.close(), redis?.stop()]);
});

const PRODUCT = 'query Product($upc: ID!) { product(upc: $upc) { upc name } }';

interface Provider {
  readonly name: string;
  cache(): Promise<ResponseCacheOptions>;
  readonly config?: () => Omit<CoreConfigInput, 'version'>;
}

const providers: Provider[] = [
  { name: 'memory', cache: async () => memoryCache },
  {
    name: 'Redis',
    async cache() {
      await redis.cli('FLUSHALL');
      return { enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } };
    },
    config: () => ({ storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } }),
  },
];

async function waitForCalls(count: number): Promise<void> {
  for (let i = 0; i < 200 && graph.products.calls.length < count; i++) await sleep(10);
  expect(graph.products.calls).toHaveLength(count);
}

for (const provider of providers) {
  describe(`concurrent writes and invalidations on ${provider.name}`, () => {
    let guarded: InvalidatingRouter;
    let unguarded: InvalidatingRouter;

    beforeEach(async () => {
      graph.reset();
      const cache = await provider.cache();
      guarded = await startInvalidatingRouter(graph, cache, provider.config?.());
      unguarded = await startInvalidatingRouter(graph, { ...cache, key_prefix: 'unguarded:', invalidation: { guard_concurrent_writes: false } }, provider.config?.());
    });

    afterEach(async () => {
      await guarded.router.close();
      await unguarded.router.close();
    });

    /** Starts a request whose answer is read now and sent later; changes the data and invalidates meanwhile. */
    async function raceOne(target: InvalidatingRouter): Promise<void> {
      const release = graph.hold();
      const inFlight = target.router.query({ query: PRODUCT, variables: { upc: 'p1' } });
      await waitForCalls(1);
      graph.data.products.get('p1')!.name = 'Desk';
      expect(await target.invalidate([{ kind: 'subgraph', subgraph: 'products' }])).toEqual({ status: 202, body: { count: 0 } });
      release();
      expect((await inFlight).body).toEqual({ data: { product: { upc: 'p1', name: 'Table' } } });
    }

    it('with the guard, an answer read before the invalidation is not kept', async () => {
      await raceOne(guarded);
      const next = await guarded.router.query({ query: PRODUCT, variables: { upc: 'p1' } });
      expect(next.body).toEqual({ data: { product: { upc: 'p1', name: 'Desk' } } });
      expect(graph.products.calls).toHaveLength(2);
    });

    it('without the guard, the known defect shows: the old answer survives the invalidation', async () => {
      await raceOne(unguarded);
      const next = await unguarded.router.query({ query: PRODUCT, variables: { upc: 'p1' } });
      expect(next.body).toEqual({ data: { product: { upc: 'p1', name: 'Table' } } });
      expect(graph.products.calls).toHaveLength(1);
    });

    it('with the guard, requests sharing one in-flight fetch across an invalidation leave no stale entry', async () => {
      const release = graph.hold();
      const first = guarded.router.query({ query: PRODUCT, variables: { upc: 'p1' } });
      await waitForCalls(1);
      graph.data.products.get('p1')!.name = 'Desk';
      await guarded.invalidate([{ kind: 'subgraph', subgraph: 'products' }]);
      // Identical and in flight: single flight makes this one share the first one's subgraph call.
      const joiner = guarded.router.query({ query: PRODUCT, variables: { upc: 'p1' } });
      await sleep(100);
      release();
      for (const answer of await Promise.all([first, joiner])) expect(answer.body).toEqual({ data: { product: { upc: 'p1', name: 'Table' } } });
      expect(graph.products.calls).toHaveLength(1);
      const next = await guarded.router.query({ query: PRODUCT, variables: { upc: 'p1' } });
      expect(next.body).toEqual({ data: { product: { upc: 'p1', name: 'Desk' } } });
    });

    it('with the guard, many concurrent requests and invalidations leave no stale entry', async () => {
      const upcs = ['p1', 'p2', 'p3'];
      for (let round = 0; round < 5; round++) {
        const release = graph.hold();
        const requests = upcs.flatMap((upc) => [0, 1, 2].map(() => guarded.router.query({ query: PRODUCT, variables: { upc } })));
        await sleep(50);
        for (const upc of upcs) graph.data.products.get(upc)!.name = `Round ${round}`;
        const invalidation = guarded.invalidate([{ kind: 'subgraph', subgraph: 'products' }]);
        release();
        await Promise.all([...requests, invalidation]);
        for (const upc of upcs) {
          const fresh = await guarded.router.query({ query: PRODUCT, variables: { upc } });
          expect(fresh.body).toEqual({ data: { product: { upc, name: `Round ${round}` } } });
        }
      }
    });
  });
}
