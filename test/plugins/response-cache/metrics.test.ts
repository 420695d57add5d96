import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, memoryCache, useCacheGraph } from './fixtures.js';
import { startInvalidatingRouter, type InvalidatingRouter } from './invalidation-suite.js';

let graph: CacheGraph;
let target: InvalidatingRouter;
let router: TestRouter;

useCacheGraph((started) => (graph = started));

beforeAll(async () => {
  target = await startInvalidatingRouter(graph, memoryCache, { metrics: { enabled: true, listen_addr: '127.0.0.1:0' } });
  router = target.router;
  await router.router.listen('127.0.0.1:0');
});

afterAll(async () => {
  await router?.close();
});

async function cacheMetrics(): Promise<string[]> {
  const text = await (await fetch(router.router.metricsUrl!)).text();
  return text.split('\n').filter((line) => line.startsWith('switchyard_response_cache_'));
}

const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';

describe('response cache metrics', () => {
  it('count hits, misses, partial hits, stores, invalidations, calls avoided and time saved by subgraph and type', async () => {
    await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
    await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
    await router.query({ query: WITH_REVIEWS, variables: { first: 3 } });
    await target.invalidate([{ kind: 'type', subgraph: 'reviews', type: 'Product' }]);
    expect(await cacheMetrics()).toEqual([
      'switchyard_response_cache_hits_total{subgraph="products",type="Query"} 1',
      'switchyard_response_cache_hits_total{subgraph="reviews",type="Product"} 4',
      'switchyard_response_cache_misses_total{subgraph="products",type="Query"} 2',
      'switchyard_response_cache_misses_total{subgraph="reviews",type="Product"} 3',
      'switchyard_response_cache_stores_total{subgraph="products",type="Query"} 2',
      'switchyard_response_cache_stores_total{subgraph="reviews",type="Product"} 3',
      'switchyard_response_cache_invalidated_total{subgraph="reviews",type="Product"} 3',
      // The second request avoided both calls; the third fetched only p3's reviews.
      'switchyard_response_cache_partial_hits_total{subgraph="reviews",type="Product"} 1',
      'switchyard_response_cache_calls_avoided_total{subgraph="products",type="Query"} 1',
      'switchyard_response_cache_calls_avoided_total{subgraph="reviews",type="Product"} 1',
      expect.stringMatching(/^switchyard_response_cache_time_saved_seconds_total\{subgraph="products",type="Query"\} 0\.\d+(e-\d+)?$/),
      expect.stringMatching(/^switchyard_response_cache_time_saved_seconds_total\{subgraph="reviews",type="Product"\} 0\.\d+(e-\d+)?$/),
    ]);
  });
});
