import { describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { DEGRADED_MESSAGE } from '../../../plugins/response-cache/index.js';
import type { RedisServer } from '../../support/redis.js';
import { type CacheGraph, type capturingLogger, sleep } from './fixtures.js';
import { useRedisBackedRouter } from './redis-backed-router.js';

let graph: CacheGraph;
let redis: RedisServer;
let router: TestRouter;
let logs: ReturnType<typeof capturingLogger>;

useRedisBackedRouter((setup) => ({ graph, redis, router, logs } = setup));

const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';
const ANSWER = {
  data: {
    products: [
      { upc: 'p1', reviews: [{ body: 'Love it!' }] },
      { upc: 'p2', reviews: [{ body: 'Too expensive.' }] },
    ],
  },
};

const warnings = () => logs.lines.filter((line) => line.msg === DEGRADED_MESSAGE);

describe('when the shared store fails at run time', () => {
  it('keeps answering from the subgraphs, warns at most once a second, and caches again once the store is back', async () => {
    expect((await router.query({ query: WITH_REVIEWS, variables: { first: 2 } })).body).toEqual(ANSWER);
    expect((await router.query({ query: WITH_REVIEWS, variables: { first: 2 } })).body).toEqual(ANSWER);
    expect(graph.products.calls).toHaveLength(1);

    await redis.kill();
    graph.reset();
    const started = Date.now();
    for (let i = 0; i < 10; i++) {
      const response = await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(ANSWER);
    }
    expect(graph.products.calls).toHaveLength(10);
    expect(graph.reviews.calls).toHaveLength(10);
    // Ten requests, each failing a read and more: one warning per started second at most.
    const seconds = Math.floor((Date.now() - started) / 1000) + 1;
    expect(warnings().length).toBeGreaterThanOrEqual(1);
    expect(warnings().length).toBeLessThanOrEqual(seconds);
    expect(warnings()[0]).toMatchObject({ level: 'warn', plugin: 'response-cache', msg: DEGRADED_MESSAGE, operation: 'read' });

    await sleep(1100);
    await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
    expect(warnings().length).toBeGreaterThanOrEqual(2);

    await redis.restart();
    graph.reset();
    let cachedAgain = false;
    for (let attempt = 0; attempt < 50 && !cachedAgain; attempt++) {
      await sleep(200);
      const before = graph.products.calls.length;
      expect((await router.query({ query: WITH_REVIEWS, variables: { first: 2 } })).body).toEqual(ANSWER);
      cachedAgain = graph.products.calls.length === before && before > 0;
    }
    expect(cachedAgain).toBe(true);
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 'info', plugin: 'response-cache', msg: 'Response cache store reachable again' }));
  });
});
