import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, memoryCache, useCacheGraph } from './fixtures.js';

let graph: CacheGraph;
let router: TestRouter;

useCacheGraph((started) => (graph = started));

beforeEach(async () => {
  router = await graph.router({ cache: { ...memoryCache, debug: { enabled: true } } });
});

afterEach(async () => {
  await router.close();
});

const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';
const DEBUG = { 'x-switchyard-cache-debug': 'true' };

describe('the Cache-Control of the router answer', () => {
  it('takes the smallest lifetime, public when every subgraph said public', async () => {
    graph.reply.products.cacheControl = 'public, max-age=120';
    graph.reply.reviews.cacheControl = 'public, s-maxage=30';
    const response = await router.query({ query: WITH_REVIEWS, variables: { first: 1 } });
    expect(response.headers.get('cache-control')).toBe('public, max-age=30');
  });

  it('is not public when one subgraph did not say public', async () => {
    graph.reply.products.cacheControl = 'public, max-age=120';
    graph.reply.reviews.cacheControl = 'max-age=60';
    const response = await router.query({ query: WITH_REVIEWS, variables: { first: 1 } });
    expect(response.headers.get('cache-control')).toBe('max-age=60');
  });

  it('is no-store when one subgraph said private, no-store or nothing', async () => {
    graph.reply.products.cacheControl = 'public, max-age=120';
    for (const header of ['private, max-age=60', 'no-store', undefined]) {
      graph.reply.reviews.cacheControl = header;
      const response = await router.query({ query: WITH_REVIEWS, variables: { first: 1 } });
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('is no-store when the answer has errors', async () => {
    graph.reply.products.cacheControl = 'public, max-age=120';
    const response = await router.query('{ failing { upc } }');
    expect(response.body.errors).toHaveLength(1);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('is no-store for a mutation', async () => {
    const response = await router.query('mutation { rename(upc: "p1", name: "Desk") { upc } }');
    expect(response.body).toEqual({ data: { rename: { upc: 'p1' } } });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('counts down on hits: an entry cached a while ago has less lifetime left', async () => {
    graph.reply.products.cacheControl = 'public, max-age=3';
    graph.reply.reviews.cacheControl = 'public, max-age=3';
    await router.query({ query: WITH_REVIEWS, variables: { first: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const hit = await router.query({ query: WITH_REVIEWS, variables: { first: 1 } });
    expect(graph.products.calls).toHaveLength(1);
    expect(hit.headers.get('cache-control')).toBe('public, max-age=1');
  });
});

describe('the cache debug header', () => {
  it('lists each fetch with its status: miss, then hit', async () => {
    const miss = await router.query({ query: WITH_REVIEWS, variables: { first: 2 }, headers: DEBUG });
    expect(miss.body).toEqual({
      data: {
        products: [
          { upc: 'p1', reviews: [{ body: 'Love it!' }] },
          { upc: 'p2', reviews: [{ body: 'Too expensive.' }] },
        ],
      },
      extensions: {
        responseCache: [
          { subgraph: 'products', kind: 'root', status: 'miss' },
          { subgraph: 'reviews', kind: 'entity', status: 'miss' },
        ],
      },
    });
    const hit = await router.query({ query: WITH_REVIEWS, variables: { first: 2 }, headers: DEBUG });
    expect(hit.body.extensions).toEqual({
      responseCache: [
        { subgraph: 'products', kind: 'root', status: 'hit' },
        { subgraph: 'reviews', kind: 'entity', status: 'hit' },
      ],
    });
  });

  it('reports partial_hit when some entities came from the cache, and skip for mutations', async () => {
    await router.query({ query: WITH_REVIEWS, variables: { first: 1 } });
    const partial = await router.query({ query: WITH_REVIEWS, variables: { first: 3 }, headers: DEBUG });
    expect(partial.body.extensions).toEqual({
      responseCache: [
        { subgraph: 'products', kind: 'root', status: 'miss' },
        { subgraph: 'reviews', kind: 'entity', status: 'partial_hit' },
      ],
    });
    const mutation = await router.query({ query: 'mutation { rename(upc: "p1", name: "Desk") { upc } }', headers: DEBUG });
    expect(mutation.body).toEqual({ data: { rename: { upc: 'p1' } }, extensions: { responseCache: [{ subgraph: 'products', kind: 'root', status: 'skip' }] } });
  });

  it('adds nothing without the header', async () => {
    const response = await router.query({ query: WITH_REVIEWS, variables: { first: 1 } });
    expect(response.body).toEqual({ data: { products: [{ upc: 'p1', reviews: [{ body: 'Love it!' }] }] } });
  });

  it('is ignored unless response_cache.debug.enabled', async () => {
    const quiet = await graph.router({ cache: memoryCache });
    try {
      const response = await quiet.query({ query: WITH_REVIEWS, variables: { first: 1 }, headers: DEBUG });
      expect(response.body).toEqual({ data: { products: [{ upc: 'p1', reviews: [{ body: 'Love it!' }] }] } });
    } finally {
      await quiet.close();
    }
  });
});
