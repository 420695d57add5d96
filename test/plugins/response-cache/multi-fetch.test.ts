import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, capturingLogger, memoryCache, useCacheGraph } from './fixtures.js';

let graph: CacheGraph;
let router: TestRouter;
let logs: ReturnType<typeof capturingLogger>;

useCacheGraph((started) => (graph = started));

beforeAll(async () => {
  logs = capturingLogger('debug');
  router = await graph.router({ cache: { ...memoryCache, debug: { enabled: true } }, config: { engine: { enable_multi_fetch: true } }, logger: logs.logger });
});

afterAll(async () => {
  await router?.close();
});

// Two entity fetches to `reviews` in one parallel wave: merged into one request.
const TWO_WAVES = '{ products(first: 2) { upc reviews { body } } product(upc: "p3") { upc reviewCount } }';

describe('with engine.enable_multi_fetch', () => {
  it('does not cache merged entity fetches, reports them as skip, and logs the skip once at debug level', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await router.query({ query: TWO_WAVES, headers: { 'x-switchyard-cache-debug': 'true' } });
      expect(response.body).toEqual({
        data: {
          products: [
            { upc: 'p1', reviews: [{ body: 'Love it!' }] },
            { upc: 'p2', reviews: [{ body: 'Too expensive.' }] },
          ],
          product: { upc: 'p3', reviewCount: 1 },
        },
        extensions: {
          responseCache: [
            { subgraph: 'products', kind: 'root', status: i === 0 ? 'miss' : 'hit' },
            { subgraph: 'reviews', kind: 'entity', status: 'skip' },
          ],
        },
      });
    }
    expect(graph.products.calls).toHaveLength(1);
    expect(graph.reviews.calls).toHaveLength(3);
    expect(graph.reviews.calls[0]!.query).toContain('_e1: _entities');
    expect(logs.lines.filter((line) => line.plugin === 'response-cache' && line.level === 'debug')).toEqual([
      expect.objectContaining({ msg: 'Response cache skips merged entity fetches (engine.enable_multi_fetch)', subgraph: 'reviews' }),
    ]);
  });
});
