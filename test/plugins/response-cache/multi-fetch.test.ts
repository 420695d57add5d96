import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SwitchyardPlugin } from '../../../src/index.js';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, capturingLogger, memoryCache, useCacheGraph } from './fixtures.js';

let graph: CacheGraph;
let router: TestRouter;
let marked: TestRouter;
let logs: ReturnType<typeof capturingLogger>;

useCacheGraph((started) => (graph = started));

/**
 * Marks every entity request as merged by `engine.enable_multi_fetch`, as
 * the executor does for fetches it merges at run time (the plan leaves it
 * hardly any: it batches same-wave fetches itself).
 */
const markMerged: SwitchyardPlugin = {
  name: 'mark-merged',
  setup: () => ({
    hooks: {
      onFetch(event) {
        if (event.input.kind === 'entity') event.setInput({ ...event.input, merged: true });
      },
    },
  }),
};

beforeAll(async () => {
  logs = capturingLogger('debug');
  const cache = { ...memoryCache, debug: { enabled: true } };
  router = await graph.router({ cache, config: { engine: { enable_multi_fetch: true } } });
  marked = await graph.router({ cache, config: { engine: { enable_multi_fetch: true } }, logger: logs.logger, before: [markMerged] });
});

afterAll(async () => {
  await Promise.all([router?.close(), marked?.close()]);
});

// Two entity fetches to `reviews` in one wave, selecting Product differently: one batched call of two parts.
const TWO_PARTS = '{ products(first: 2) { upc reviews { body } } product(upc: "p3") { upc reviewCount } }';

const EXPECTED = {
  products: [
    { upc: 'p1', reviews: [{ body: 'Love it!' }] },
    { upc: 'p2', reviews: [{ body: 'Too expensive.' }] },
  ],
  product: { upc: 'p3', reviewCount: 1 },
};

describe('with engine.enable_multi_fetch', () => {
  it("caches the plan's batched call part by part: the repeat is answered from the cache", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await router.query({ query: TWO_PARTS, headers: { 'x-switchyard-cache-debug': 'true' } });
      expect(response.body).toEqual({
        data: EXPECTED,
        extensions: {
          responseCache: [
            { subgraph: 'products', kind: 'root', status: i === 0 ? 'miss' : 'hit' },
            { subgraph: 'reviews', kind: 'entity', status: i === 0 ? 'miss' : 'hit' },
          ],
        },
      });
    }
    expect(graph.reviews.calls).toHaveLength(1);
    expect(graph.reviews.calls[0]!.query).toContain('_1: _entities(representations: $r1)');
  });

  it('does not cache entity requests merged at run time, reports them as skip, and logs the skip once at debug level', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await marked.query({ query: TWO_PARTS, headers: { 'x-switchyard-cache-debug': 'true' } });
      expect(response.body.data).toEqual(EXPECTED);
      expect((response.body.extensions as { responseCache: unknown[] }).responseCache[1]).toEqual({ subgraph: 'reviews', kind: 'entity', status: 'skip' });
    }
    expect(graph.reviews.calls).toHaveLength(3);
    expect(logs.lines.filter((line) => line.plugin === 'response-cache' && line.level === 'debug')).toEqual([
      expect.objectContaining({ msg: 'Response cache skips merged entity fetches (engine.enable_multi_fetch)', subgraph: 'reviews' }),
    ]);
  });
});
