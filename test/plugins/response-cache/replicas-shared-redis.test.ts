/**
 * Router replicas sharing one Redis (`provider: sharedstore`, no memory
 * tier): what one replica's invalidation means for the others, and the
 * write guard when identical fetches share one subgraph call (single flight)
 * across an invalidation received by another replica.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ResponseCacheOptions } from '../../../plugins/response-cache/index.js';
import { useTelemetry } from '../../../plugins/telemetry/index.js';
import type { SwitchyardPlugin } from '../../../src/index.js';
import type { TestRouter } from '../../../src/testing/index.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { startOtlpReceiver, type OtlpReceiver } from '../telemetry/otlp-receiver.js';
import { INVALIDATION_ENDPOINT, type InvalidatingRouter, representationsOf, sleep, startCacheGraph, startWithInvalidationEndpoint, type CacheGraph } from './fixtures.js';

let graph: CacheGraph;
let redis: RedisServer;
let receiver: OtlpReceiver;

beforeAll(async () => {
  [graph, redis, receiver] = await Promise.all([startCacheGraph(), startRedis(), startOtlpReceiver()]);
});

afterAll(async () => {
  await Promise.all([graph?.close(), redis?.stop(), receiver?.close()]);
});

const PRODUCT = 'query Product($upc: ID!) { product(upc: $upc) { upc name } }';
const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';
const cache: ResponseCacheOptions = { enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' }, invalidation: { endpoint: INVALIDATION_ENDPOINT } };
const config = () => ({ storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } });
/** Tracing as production runs it: every subgraph call carries its own `traceparent`. */
const tracing = () => useTelemetry({ service_name: 'replica', tracing: { enabled: true, exporters: [{ endpoint: receiver.endpoint, batch_timeout: '20ms' }] } });

let replicas: InvalidatingRouter[] = [];

/** Starts one replica on the shared Redis, with the invalidation endpoint; `before` plugins run ahead of the cache. */
async function replica(
  before: SwitchyardPlugin[] = [],
  extra: Partial<ResponseCacheOptions> = {},
  sharedstore = config().storage_providers.sharedstore,
): Promise<InvalidatingRouter> {
  const started = await startWithInvalidationEndpoint((logger) => graph.router({ cache: { ...cache, ...extra }, config: { storage_providers: { sharedstore } }, logger, before }));
  replicas.push(started);
  return started;
}

beforeEach(async () => {
  graph.reset();
  await redis.cli('FLUSHALL');
});

afterEach(async () => {
  await Promise.all(replicas.map((started) => started.router.close()));
  replicas = [];
});

async function nameOf(router: TestRouter, upc = 'p1', headers: Record<string, string> = {}): Promise<unknown> {
  const answer = await router.query({ query: PRODUCT, variables: { upc }, headers });
  return (answer.body as { data?: { product?: { name?: unknown } } }).data?.product?.name;
}

async function firstReview(router: TestRouter): Promise<unknown> {
  const answer = await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
  return (answer.body as { data?: { products?: Array<{ reviews: Array<{ body: unknown }> }> } }).data?.products?.[0]?.reviews[0]?.body;
}

async function waitForProductCalls(count: number): Promise<void> {
  for (let i = 0; i < 200 && graph.products.calls.length < count; i++) await sleep(10);
  expect(graph.products.calls).toHaveLength(count);
}

describe('replicas sharing one Redis', () => {
  it('an invalidation by subgraph, type or tag sent to one replica is seen by another at once', async () => {
    const [a, b] = [await replica(), await replica()];
    graph.reply.reviews.extensions = (call) => ({ entityCacheTags: representationsOf(call).map((r) => [`product:${String(r.upc)}`]) });
    const elements = [
      [{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'product:p1' }],
      [{ kind: 'type', subgraph: 'reviews', type: 'Product' }],
      [{ kind: 'subgraph', subgraph: 'reviews' }],
    ];
    for (const [round, element] of elements.entries()) {
      // B caches (or reads back what A cached) and serves from the cache.
      expect(await firstReview(b.router)).toBe(round === 0 ? 'Love it!' : `Edited ${round - 1}`);
      const calls = graph.reviews.calls.length;
      expect(await firstReview(b.router)).toBe(round === 0 ? 'Love it!' : `Edited ${round - 1}`);
      expect(graph.reviews.calls).toHaveLength(calls);
      graph.data.reviews.set('p1', [{ id: 'r1', body: `Edited ${round}` }]);
      expect((await a.invalidate(element)).status).toBe(202);
      // No wait: B's very next request reads the change.
      expect(await firstReview(b.router)).toBe(`Edited ${round}`);
      expect(graph.reviews.calls.length).toBeGreaterThan(calls);
    }
  });

  /**
   * One call on B, read before the change, answers two requests: the first
   * (its epoch read before A's invalidation) and one that joined the call
   * after it. Single flight ignores trace context; with tracing every call
   * carries its own, so the joiner cannot tell by its request that it shares
   * an older call. Its write must still be checked against the call's epoch.
   */
  const joins = [
    {
      name: 'memory tier with the broadcast: the joiner must not keep the old answer in memory',
      cache: { memory_tier: { enabled: true }, invalidation: { endpoint: INVALIDATION_ENDPOINT, broadcast: { enabled: true, provider_id: 'main' } } },
      headers: [{}, {}],
    },
    {
      name: 'private entries of two users: the joiner must not store the old answer as its own',
      cache: { private_entries: { enabled: true, user_header: 'x-user-id' } },
      headers: [{ 'x-user-id': 'ada' }, { 'x-user-id': 'grace' }],
      cacheControl: 'private, max-age=60',
    },
  ] as const;
  for (const join of joins) {
    it(`with tracing, a call shared across another replica's invalidation leaves no stale entry (${join.name})`, async () => {
      if ('cacheControl' in join) graph.reply.products.cacheControl = join.cacheControl;
      const a = await replica([], join.cache);
      const b = await replica([tracing()], join.cache);
      const [leaderHeaders, joinerHeaders] = join.headers;
      const release = graph.hold();
      const first = b.router.query({ query: PRODUCT, variables: { upc: 'p1' }, headers: leaderHeaders });
      await waitForProductCalls(1);
      graph.data.products.get('p1')!.name = 'Desk';
      expect((await a.invalidate([{ kind: 'subgraph', subgraph: 'products' }])).status).toBe(202);
      // Identical in what the subgraph is sent, and in flight on B: it shares the first call.
      const joiner = b.router.query({ query: PRODUCT, variables: { upc: 'p1' }, headers: joinerHeaders });
      await sleep(100);
      release();
      // Both get the answer of the one call, read before the change (what single flight means, cache or not)...
      for (const answer of await Promise.all([first, joiner])) expect(answer.body).toEqual({ data: { product: { upc: 'p1', name: 'Table' } } });
      expect(graph.products.calls).toHaveLength(1);
      // ...but neither may write it over the invalidation: both replicas read the change, for both users.
      for (const headers of join.headers) {
        expect(await nameOf(b.router, 'p1', headers)).toBe('Desk');
        expect(await nameOf(a.router, 'p1', headers)).toBe('Desk');
      }
    });
  }
});

/** A TCP pass-through to Redis that holds what clients send for `delayMs` (answers come back at once): a slow link. */
async function slowLink(delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(redis.port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('replicas with in-process entries and the broadcast', () => {
  const tiers = [
    { name: 'memory tier', extra: { memory_tier: { enabled: true } } },
    { name: 'memory provider', extra: { storage: { provider: 'memory' } } },
  ] as const;
  for (const { name, extra } of tiers) {
    it(`${name}: the 202 comes once Redis has taken the message, and another replica applies it within milliseconds`, async () => {
      // A publishes over a slow link: a 202 sent before Redis took the message would come before any replica could hear it.
      const link = await slowLink(300);
      try {
        const broadcast = { invalidation: { endpoint: INVALIDATION_ENDPOINT, broadcast: { enabled: true, provider_id: 'bus' } } };
        const a = await replica([], { ...extra, ...broadcast }, [...config().storage_providers.sharedstore, { id: 'bus', urls: [link.url] }]);
        const b = await replica([], { ...extra, ...broadcast }, [...config().storage_providers.sharedstore, { id: 'bus', urls: [redis.url] }]);
        // Both subscribed (a replica clears its cache when its subscription is first in place: fill B after that).
        for (let i = 0; i < 100 && Number((await redis.cli('PUBSUB', 'NUMSUB', 'router_response_cache:invalidations')).split('\n')[1]) < 2; i++) await sleep(20);
        await sleep(400);
        expect(await nameOf(b.router)).toBe('Table');
        expect(await nameOf(b.router)).toBe('Table');
        expect(graph.products.calls).toHaveLength(1);
        graph.data.products.get('p1')!.name = 'Desk';
        const started = Date.now();
        expect((await a.invalidate([{ kind: 'subgraph', subgraph: 'products' }])).status).toBe(202);
        const answered = Date.now();
        expect(answered - started).toBeGreaterThanOrEqual(250);
        // B serves from its own memory until the message arrives: milliseconds after the 202 (bounded loosely here: CI machines are busy).
        while ((await nameOf(b.router)) !== 'Desk') {
          expect(Date.now() - answered).toBeLessThan(1000);
          await sleep(1);
        }
      } finally {
        await Promise.all(replicas.map((started) => started.router.close()));
        replicas = [];
        await link.close();
      }
    });
  }
});
