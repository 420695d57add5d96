import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, memoryCache, representationsOf, useCacheGraph } from './fixtures.js';

let graph: CacheGraph;
let router: TestRouter;
let wholeBatchRouter: TestRouter;

const propagateTenant = { headers: { all: { request: [{ op: 'propagate' as const, named: 'x-tenant' }] } } };

useCacheGraph((started) => (graph = started));

// A fresh memory cache per test: no test sees another's entries.
beforeEach(async () => {
  router = await graph.router({ cache: memoryCache, config: propagateTenant });
  wholeBatchRouter = await graph.router({ cache: { ...memoryCache, fetch_missing_entities_only: false } });
});

afterEach(async () => {
  await router.close();
  await wholeBatchRouter.close();
});

const PRODUCT = 'query Product($upc: ID!) { product(upc: $upc) { upc name } }';
const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc name reviews { body } } }';
const THREE_WITH_REVIEWS = [
  { upc: 'p1', name: 'Table', reviews: [{ body: 'Love it!' }] },
  { upc: 'p2', name: 'Couch', reviews: [{ body: 'Too expensive.' }] },
  { upc: 'p3', name: 'Chair', reviews: [{ body: 'Could be better.' }] },
];
const ALL_THREE = ['p1', 'p2', 'p3'].map((upc) => ({ __typename: 'Product', upc }));

describe('root fetch keys', () => {
  it('serves the same operation with the same variables from the cache', async () => {
    await router.query({ query: PRODUCT, variables: { upc: 'p1' } });
    const second = await router.query({ query: PRODUCT, variables: { upc: 'p1' } });
    expect(second.body).toEqual({ data: { product: { upc: 'p1', name: 'Table' } } });
    expect(graph.products.calls).toHaveLength(1);
  });

  it('misses when any variable value differs', async () => {
    await router.query({ query: PRODUCT, variables: { upc: 'p1' } });
    const other = await router.query({ query: PRODUCT, variables: { upc: 'p2' } });
    expect(other.body).toEqual({ data: { product: { upc: 'p2', name: 'Couch' } } });
    expect(graph.products.calls).toHaveLength(2);
  });

  it('misses when the operation text differs (another selection)', async () => {
    await router.query({ query: PRODUCT, variables: { upc: 'p1' } });
    const other = await router.query({ query: 'query Product($upc: ID!) { product(upc: $upc) { upc price } }', variables: { upc: 'p1' } });
    expect(other.body).toEqual({ data: { product: { upc: 'p1', price: 899 } } });
    expect(graph.products.calls).toHaveLength(2);
  });

  it('shares one entry between requests that differ only by a forwarded header', async () => {
    await router.query({ query: PRODUCT, variables: { upc: 'p1' }, headers: { 'x-tenant': 'alpha' } });
    const other = await router.query({ query: PRODUCT, variables: { upc: 'p1' }, headers: { 'x-tenant': 'beta' } });
    expect(other.body).toEqual({ data: { product: { upc: 'p1', name: 'Table' } } });
    expect(graph.products.calls).toHaveLength(1);
    expect(graph.products.calls[0]!.headers['x-tenant']).toBe('alpha');
  });
});

describe('entity fetch keys', () => {
  it('keeps one entry per entity: a later request for one of them needs no entity fetch', async () => {
    const first = await router.query({ query: WITH_REVIEWS, variables: { first: 3 } });
    expect(first.body).toEqual({ data: { products: THREE_WITH_REVIEWS } });
    expect(graph.reviews.calls).toHaveLength(1);
    const single = await router.query({ query: 'query One($upc: ID!) { product(upc: $upc) { upc name reviews { body } } }', variables: { upc: 'p2' } });
    expect(single.body).toEqual({ data: { product: { upc: 'p2', name: 'Couch', reviews: [{ body: 'Too expensive.' }] } } });
    expect(graph.reviews.calls).toHaveLength(1);
  });

  it('does not share entries between selection sets: other fields of the same entity miss', async () => {
    await router.query({ query: WITH_REVIEWS, variables: { first: 3 } });
    const counts = await router.query({ query: 'query Top($first: Int) { products(first: $first) { upc name reviewCount } }', variables: { first: 3 } });
    expect(counts.body).toEqual({
      data: {
        products: [
          { upc: 'p1', name: 'Table', reviewCount: 1 },
          { upc: 'p2', name: 'Couch', reviewCount: 1 },
          { upc: 'p3', name: 'Chair', reviewCount: 1 },
        ],
      },
    });
    expect(graph.reviews.calls).toHaveLength(2);
    expect(representationsOf(graph.reviews.calls[1]!)).toEqual(ALL_THREE);
  });

  it('on a partial hit, fetches only the missing entities and answers the whole batch', async () => {
    await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
    graph.reviews.reset();
    const all = await router.query({ query: WITH_REVIEWS, variables: { first: 3 } });
    expect(all.body).toEqual({ data: { products: THREE_WITH_REVIEWS } });
    expect(graph.reviews.calls).toHaveLength(1);
    expect(representationsOf(graph.reviews.calls[0]!)).toEqual([{ __typename: 'Product', upc: 'p3' }]);
  });

  it('on a partial hit, errors of the fetched entities keep the paths of their own positions', async () => {
    await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
    graph.data.reviews.set('p3', null);
    const all = await router.query({ query: WITH_REVIEWS, variables: { first: 3 } });
    expect(all.body).toEqual({
      data: {
        products: [
          { upc: 'p1', name: 'Table', reviews: [{ body: 'Love it!' }] },
          { upc: 'p2', name: 'Couch', reviews: [{ body: 'Too expensive.' }] },
          { upc: 'p3', name: 'Chair', reviews: null },
        ],
      },
      errors: [{ message: 'reviews of p3 are unavailable', path: ['products', 2, 'reviews'] }],
    });
  });

  it('with fetch_missing_entities_only off, one missing entity sends the whole batch', async () => {
    await wholeBatchRouter.query({ query: WITH_REVIEWS, variables: { first: 2 } });
    graph.reviews.reset();
    const all = await wholeBatchRouter.query({ query: WITH_REVIEWS, variables: { first: 3 } });
    expect(all.body.data?.products).toHaveLength(3);
    expect(graph.reviews.calls).toHaveLength(1);
    expect(representationsOf(graph.reviews.calls[0]!)).toEqual(ALL_THREE);
  });

  it('does not store an entity the subgraph could not resolve', async () => {
    const query = 'query One($upc: ID!) { product(upc: $upc) { upc reviewCount } }';
    graph.data.products.set('missing', { upc: 'missing', name: 'Ghost', price: 0 });
    for (let i = 0; i < 2; i++) {
      const response = await router.query({ query, variables: { upc: 'missing' } });
      expect(response.body).toEqual({ data: { product: { upc: 'missing', reviewCount: null } } });
    }
    expect(graph.reviews.calls).toHaveLength(2);
  });
});
