import { describe, expect, it } from 'vitest';
import { type CacheGraph, memoryCache, useCacheGraph } from './fixtures.js';

let graph: CacheGraph;

useCacheGraph((started) => (graph = started));

const PRODUCT = 'query Product($upc: ID!) { product(upc: $upc) { upc name } }';

describe('the memory provider', () => {
  it('keeps at most max_entries entries, evicting the least recently used', async () => {
    const router = await graph.router({ cache: { ...memoryCache, storage: { provider: 'memory', max_entries: 2 } } });
    try {
      for (const upc of ['p1', 'p2', 'p1', 'p3']) await router.query({ query: PRODUCT, variables: { upc } });
      expect(graph.products.calls.map((call) => call.variables.upc)).toEqual(['p1', 'p2', 'p3']);
      // p2 was the least recently used when p3 came in.
      await router.query({ query: PRODUCT, variables: { upc: 'p1' } });
      await router.query({ query: PRODUCT, variables: { upc: 'p3' } });
      await router.query({ query: PRODUCT, variables: { upc: 'p2' } });
      expect(graph.products.calls.map((call) => call.variables.upc)).toEqual(['p1', 'p2', 'p3', 'p2']);
    } finally {
      await router.close();
    }
  });

  it('is per replica: another router does not see the entries', async () => {
    graph.reset();
    const [one, two] = await Promise.all([graph.router({ cache: memoryCache }), graph.router({ cache: memoryCache })]);
    try {
      await one.query({ query: PRODUCT, variables: { upc: 'p1' } });
      await two.query({ query: PRODUCT, variables: { upc: 'p1' } });
      expect(graph.products.calls).toHaveLength(2);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
