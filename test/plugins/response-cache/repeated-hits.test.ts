/**
 * A repeated all-hit entity fetch on the memory provider is answered from
 * what the previous read found while the store has not changed (for at most
 * a second). Users must never see the difference: an invalidation, a new
 * write, an eviction or an expiry in between makes the next request read
 * the store again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, memoryCache, useCacheGraph } from './fixtures.js';
import { type InvalidatingRouter, startInvalidatingRouter } from './invalidation-suite.js';

let graph: CacheGraph;
let target: InvalidatingRouter | undefined;
let plain: TestRouter | undefined;

useCacheGraph((started) => (graph = started));

afterEach(async () => {
  await target?.router.close();
  await plain?.close();
  target = undefined;
  plain = undefined;
});

const WITH_REVIEWS = '{ products(first: 3) { upc reviews { body } } }';
const reviewBodies = (body: unknown) => (body as { data: { products: Array<{ reviews: Array<{ body: string }> }> } }).data.products.map((p) => p.reviews.map((r) => r.body).join());

describe('repeated cache hits on the memory provider', () => {
  it('serve what an invalidation right before them left, not what was cached', async () => {
    target = await startInvalidatingRouter(graph, memoryCache);
    const router = target.router;
    await router.query(WITH_REVIEWS);
    for (let i = 0; i < 3; i++) expect(reviewBodies((await router.query(WITH_REVIEWS)).body)).toEqual(['Love it!', 'Too expensive.', 'Could be better.']);
    expect(graph.reviews.calls).toHaveLength(1);

    graph.data.reviews.set('p2', [{ id: 'r9', body: 'Now cheaper.' }]);
    expect((await target.invalidate([{ kind: 'type', subgraph: 'reviews', type: 'Product' }])).status).toBe(202);
    expect(reviewBodies((await router.query(WITH_REVIEWS)).body)).toEqual(['Love it!', 'Now cheaper.', 'Could be better.']);
    expect(graph.reviews.calls).toHaveLength(2);
  });

  it('never outlive the entries: after max-age the subgraph is asked again', async () => {
    graph.reply.reviews.cacheControl = 'max-age=1';
    plain = await graph.router({ cache: memoryCache });
    await plain.query(WITH_REVIEWS);
    await plain.query(WITH_REVIEWS);
    expect(graph.reviews.calls).toHaveLength(1);
    graph.data.reviews.set('p1', [{ id: 'r8', body: 'Changed.' }]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(reviewBodies((await plain.query(WITH_REVIEWS)).body)[0]).toBe('Changed.');
    expect(graph.reviews.calls).toHaveLength(2);
  });

  it('give the client the lifetime left, counting down', async () => {
    graph.reply.products.cacheControl = 'public, max-age=60';
    graph.reply.reviews.cacheControl = 'public, max-age=3';
    plain = await graph.router({ cache: memoryCache });
    await plain.query(WITH_REVIEWS);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const first = await plain.query(WITH_REVIEWS);
    const again = await plain.query(WITH_REVIEWS);
    expect(graph.reviews.calls).toHaveLength(1);
    expect(first.headers.get('cache-control')).toBe('public, max-age=1');
    expect(again.headers.get('cache-control')).toBe('public, max-age=1');
  });

  it('stay correct when an eviction makes room for another entry in between', async () => {
    plain = await graph.router({ cache: { ...memoryCache, storage: { provider: 'memory', max_entries: 4 } } });
    // The root entry and the 3 reviews fill the cache; repeated hits keep the root entry the most recent.
    for (let i = 0; i < 3; i++) await plain.query(WITH_REVIEWS);
    expect(graph.reviews.calls).toHaveLength(1);
    // One more entry evicts the least recently used: the review of p1.
    await plain.query('{ product(upc: "p3") { name } }');
    graph.data.reviews.set('p1', [{ id: 'r7', body: 'Evicted and fetched again.' }]);
    expect(reviewBodies((await plain.query(WITH_REVIEWS)).body)).toEqual(['Evicted and fetched again.', 'Too expensive.', 'Could be better.']);
    expect(graph.reviews.calls).toHaveLength(2);
  });
});
