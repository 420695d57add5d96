/**
 * `response_cache.shadow_mode`: the cache is read and written but every
 * answer comes from the subgraphs; a deliberately stale entry is counted as
 * a mismatch per subgraph and type, and logged (sampled) with its key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { SHADOW_MISMATCH_MESSAGE } from '../../../plugins/response-cache/index.js';
import { sameJson } from '../../../plugins/response-cache/shadow.js';
import { type CacheGraph, capturingLogger, memoryCache, useCacheGraph } from './fixtures.js';

const QUERY = 'query Top($first: Int) { products(first: $first) { upc name reviews { body } } }';

let graph: CacheGraph;
useCacheGraph((started) => (graph = started));

let router: TestRouter | undefined;
afterEach(async () => {
  await router?.close();
  router = undefined;
});

async function metricsText(): Promise<string> {
  return (await fetch(router!.router.metricsUrl!)).text();
}

function counter(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((row) => row.startsWith(`${name}{`) && row.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function firstProduct(): Promise<{ name: string; review: string; statuses: string[] | undefined }> {
  const answer = await router!.query({ query: QUERY, variables: { first: 2 }, headers: { 'x-switchyard-cache-debug': 'true' } });
  const body = answer.body as {
    data: { products: Array<{ name: string; reviews: Array<{ body: string }> }> };
    extensions?: { responseCache?: Array<{ status: string }> };
  };
  return { name: body.data.products[0]!.name, review: body.data.products[0]!.reviews[0]!.body, statuses: body.extensions?.responseCache?.map((item) => item.status) };
}

describe('shadow mode', () => {
  it('answers from the subgraphs, and counts and logs a stale entry per subgraph and type', async () => {
    const { logger, lines } = capturingLogger('info');
    router = await graph.router({
      cache: { ...memoryCache, shadow_mode: { enabled: true }, debug: { enabled: true } },
      config: { metrics: { enabled: true, listen_addr: '127.0.0.1:0' } },
      logger,
    });
    await router.router.listen('127.0.0.1:0');
    expect(await firstProduct()).toEqual({ name: 'Table', review: 'Love it!', statuses: ['miss', 'miss'] });
    // The entries are written: the next request would be all hits, and is still fetched.
    expect(await firstProduct()).toEqual({ name: 'Table', review: 'Love it!', statuses: ['hit', 'hit'] });
    expect(graph.products.calls).toHaveLength(2);
    expect(graph.reviews.calls).toHaveLength(2);
    let text = await metricsText();
    expect(counter(text, 'switchyard_response_cache_shadow_compared_total', 'subgraph="reviews",type="Product"')).toBe(2);
    expect(counter(text, 'switchyard_response_cache_shadow_mismatches_total', 'subgraph="reviews"')).toBe(0);
    expect(lines.filter((line) => line.msg === SHADOW_MISMATCH_MESSAGE)).toHaveLength(0);

    // The data changes without an invalidation: the cached entries are now stale.
    graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    for (let i = 0; i < 3; i++) expect(await firstProduct()).toMatchObject({ name: 'Table', review: 'Changed my mind.' });
    text = await metricsText();
    expect(counter(text, 'switchyard_response_cache_shadow_mismatches_total', 'subgraph="reviews",type="Product"')).toBe(3);
    expect(counter(text, 'switchyard_response_cache_shadow_mismatches_total', 'subgraph="products"')).toBe(0);
    expect(counter(text, 'switchyard_response_cache_shadow_compared_total', 'subgraph="products",type="Query"')).toBe(4);
    const logged = lines.filter((line) => line.msg === SHADOW_MISMATCH_MESSAGE);
    // Three mismatches within a second: one line.
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'warn', plugin: 'response-cache', subgraph: 'reviews', type: 'Product', key: expect.stringContaining('entity:reviews:Product:') });
    // The stale entry stays (as it would while serving): the mismatch is counted until it expires or is invalidated.
    expect(graph.reviews.calls).toHaveLength(5);
  });
});

describe('sameJson', () => {
  it('compares JSON values deeply, ignoring key order', () => {
    expect(sameJson({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameJson(null, {})).toBe(false);
  });
});
