import { describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter } from '../../../src/testing/index.js';
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

describe('the memory provider under answers a client makes large', () => {
  it('keeps at most storage.max_size bytes, however few entries: the least recently used go first', async () => {
    // Each answer is ~60 KB of JSON, its size and key chosen by the client's variables; 40 of them is ~2.4 MB.
    const items = await startSubgraph({
      name: 'items',
      typeDefs: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
        type Item { id: ID! label: String! }
        type Query { items(n: Int!, tag: String!): [Item!]! }`,
      resolvers: { Query: { items: (_: unknown, { n, tag }: { n: number; tag: string }) => Array.from({ length: n }, (_, i) => ({ id: `${tag}-${i}`, label: 'x'.repeat(40) })) } },
      reply: () => ({ headers: { 'cache-control': 'public, max-age=600' } }),
    });
    const router = await startTestRouter({
      subgraphs: [items],
      plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory', max_size: '1MB' } })],
    });
    try {
      const query = 'query Items($tag: String!) { items(n: 1000, tag: $tag) { id label } }';
      for (let t = 0; t < 40; t += 1) expect((await router.query({ query, variables: { tag: `t${t}` } })).status).toBe(200);
      items.reset();
      await router.query({ query, variables: { tag: 't39' } });
      expect(items.calls).toHaveLength(0);
      await router.query({ query, variables: { tag: 't0' } });
      expect(items.calls.map((call) => call.variables.tag)).toEqual(['t0']);
    } finally {
      await router.close();
      await items.close();
    }
  });
});
