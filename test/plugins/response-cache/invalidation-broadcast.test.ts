/**
 * `response_cache.invalidation.broadcast`: three replicas with the memory
 * provider share one redis-server; an invalidation sent to one reaches all.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import {
  type CacheGraph,
  memoryCache,
  representationsOf,
  sleep,
  useCacheGraph,
  INVALIDATION_ENDPOINT,
  type InvalidatingRouter,
  startWithInvalidationEndpoint,
} from './fixtures.js';

const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc name reviews { body } } }';

let graph: CacheGraph;
let redis: RedisServer;
useCacheGraph((started) => (graph = started));

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

type Replica = InvalidatingRouter;

let replicas: Replica[] = [];
afterEach(async () => {
  await Promise.all(replicas.map((replica) => replica.router.close()));
  replicas = [];
});

async function replica(): Promise<Replica> {
  const started = await startWithInvalidationEndpoint((logger) =>
    graph.router({
      cache: {
        ...memoryCache,
        invalidation: {
          endpoint: INVALIDATION_ENDPOINT,
          broadcast: { enabled: true, provider_id: 'main' },
        },
      },
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
      logger,
    }),
  );
  replicas.push(started);
  return started;
}

async function threeReplicas(): Promise<Replica[]> {
  const started = await Promise.all([replica(), replica(), replica()]);
  // Each subscribes in the background: wait until Redis lists three subscribers.
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && (await redis.cli('PUBSUB', 'NUMSUB', 'router_response_cache:invalidations')).split('\n')[1] !== '3') await sleep(20);
  graph.reply.reviews.extensions = (call) => ({ entityCacheTags: representationsOf(call).map((r) => [`product:${String(r.upc)}`]) });
  for (const { router } of started) await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
  return started;
}

async function firstReview(router: TestRouter): Promise<string> {
  const answer = await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
  const products = (answer.body as { data: { products: Array<{ reviews: Array<{ body: string }> }> } }).data.products;
  return products[0]!.reviews[0]!.body;
}

/** Polls until every replica answers `body` for p1's first review; resolves with how long that took. */
async function untilAllAnswer(all: readonly Replica[], body: string, timeoutMs: number): Promise<number> {
  const start = Date.now();
  for (const { router } of all) {
    while ((await firstReview(router)) !== body) {
      if (Date.now() - start > timeoutMs) throw new Error(`a replica still answers stale data after ${timeoutMs}ms`);
      await sleep(20);
    }
  }
  return Date.now() - start;
}

describe('invalidation broadcast between replicas', () => {
  it('removes the entry on all three replicas within a second of an invalidation sent to one', async () => {
    const all = await threeReplicas();
    graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    for (const { router } of all) expect(await firstReview(router)).toBe('Love it!');
    const sentAt = Date.now();
    // The count is what this replica removed: its own entries only.
    expect(await all[0]!.invalidate([{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'product:p1' }])).toEqual({ status: 202, body: { count: 1 } });
    await untilAllAnswer(all, 'Changed my mind.', 1_000);
    expect(Date.now() - sentAt).toBeLessThan(1_000);
  });

  it('invalidates locally while Redis is down (one warning), and a replica that was cut off clears its cache when Redis is back', async () => {
    const all = await threeReplicas();
    graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    await redis.kill();
    try {
      for (let i = 0; i < 3; i++) {
        expect(await all[0]!.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
      }
      expect(await firstReview(all[0]!.router)).toBe('Changed my mind.');
      // The others missed it (and keep answering from their cache while Redis is away).
      expect(await firstReview(all[1]!.router)).toBe('Love it!');
      const warnings = all[0]!.lines.filter((line) => line.level === 'warn' && String(line.msg).startsWith('Invalidation broadcast unavailable'));
      expect(warnings).toHaveLength(1);
    } finally {
      await redis.restart();
    }
    // Back: every replica that lost its subscription clears its memory cache.
    await untilAllAnswer(all, 'Changed my mind.', 5_000);
    for (const { lines } of all.slice(1)) expect(lines.some((line) => String(line.msg).startsWith('Invalidation broadcast back'))).toBe(true);
    // And broadcasts resume.
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && (await redis.cli('PUBSUB', 'NUMSUB', 'router_response_cache:invalidations')).split('\n')[1] !== '3') await sleep(20);
    graph.data.reviews.set('p1', [{ id: 'r10', body: 'Back again.' }]);
    await sleep(300); // the publisher reconnects on its own schedule
    expect(await all[2]!.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
    await untilAllAnswer(all, 'Back again.', 1_000);
  });

  it('stops startup when provider_id names no shared store', async () => {
    await expect(graph.router({ cache: { ...memoryCache, invalidation: { broadcast: { enabled: true, provider_id: 'nope' } } } })).rejects.toThrow(
      /broadcast\.provider_id.*"nope" is not in storage_providers\.sharedstore/s,
    );
  });
});
