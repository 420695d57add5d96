/**
 * What the cache saved, per request: `X-Switchyard-Cache-Debug: detail`
 * adds to each `extensions.responseCache` item the entities served and
 * fetched and, for a fetch answered whole, the subgraph time it avoided
 * (from that fetch's measured misses; in shadow mode, the call's own
 * time); `true` keeps the plain items.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, memoryCache, useCacheGraph } from './fixtures.js';

const QUERY = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';

let graph: CacheGraph;
useCacheGraph((started) => (graph = started));

let router: TestRouter | undefined;
afterEach(async () => {
  await router?.close();
  router = undefined;
});

async function items(first: number, debug: string): Promise<Array<Record<string, unknown>>> {
  const response = await router!.query({ query: QUERY, variables: { first }, headers: { 'x-switchyard-cache-debug': debug } });
  return (response.body as { extensions: { responseCache: Array<Record<string, unknown>> } }).extensions.responseCache;
}

describe('X-Switchyard-Cache-Debug: detail', () => {
  it('counts hits and misses per fetch and the subgraph time each whole hit avoided', async () => {
    router = await graph.router({ cache: { ...memoryCache, debug: { enabled: true } } });
    expect(await items(2, 'detail')).toEqual([
      { subgraph: 'products', kind: 'root', status: 'miss', hits: 0, misses: 1 },
      { subgraph: 'reviews', kind: 'entity', status: 'miss', hits: 0, misses: 2 },
    ]);
    const hits = await items(2, 'detail');
    expect(hits).toEqual([
      { subgraph: 'products', kind: 'root', status: 'hit', hits: 1, misses: 0, savedMs: expect.any(Number) },
      { subgraph: 'reviews', kind: 'entity', status: 'hit', hits: 2, misses: 0, savedMs: expect.any(Number) },
    ]);
    // The saved time is the measured miss: more than nothing, less than the test's own run.
    for (const item of hits) expect(item.savedMs).toBeGreaterThan(0);
    for (const item of hits) expect(item.savedMs).toBeLessThan(5000);
    // A partial hit avoids no call: counts only.
    expect((await items(3, 'detail'))[1]).toEqual({ subgraph: 'reviews', kind: 'entity', status: 'partial_hit', hits: 2, misses: 1 });
  });

  it('in shadow mode, counts a would-be hit with the time its real subgraph call took', async () => {
    router = await graph.router({ cache: { ...memoryCache, shadow_mode: { enabled: true }, debug: { enabled: true } } });
    await items(2, 'detail');
    const second = await items(2, 'detail');
    expect(second).toEqual([
      { subgraph: 'products', kind: 'root', status: 'hit', hits: 1, misses: 0, savedMs: expect.any(Number) },
      { subgraph: 'reviews', kind: 'entity', status: 'hit', hits: 2, misses: 0, savedMs: expect.any(Number) },
    ]);
    for (const item of second) expect(item.savedMs).toBeGreaterThan(0);
    // Nothing was actually avoided: both calls were made.
    expect(graph.products.calls).toHaveLength(2);
  });

  it('leaves the plain items as they are with `true`', async () => {
    router = await graph.router({ cache: { ...memoryCache, debug: { enabled: true } } });
    await items(2, 'true');
    expect(await items(2, 'TRUE')).toEqual([
      { subgraph: 'products', kind: 'root', status: 'hit' },
      { subgraph: 'reviews', kind: 'entity', status: 'hit' },
    ]);
  });

  it('adds nothing for any other value, or with debug off', async () => {
    router = await graph.router({ cache: { ...memoryCache, debug: { enabled: true } } });
    const other = await router.query({ query: QUERY, variables: { first: 2 }, headers: { 'x-switchyard-cache-debug': 'verbose' } });
    expect((other.body as { extensions?: unknown }).extensions).toBeUndefined();
    await router.close();
    router = await graph.router({ cache: memoryCache });
    const off = await router.query({ query: QUERY, variables: { first: 2 }, headers: { 'x-switchyard-cache-debug': 'detail' } });
    expect((off.body as { extensions?: unknown }).extensions).toBeUndefined();
  });
});
