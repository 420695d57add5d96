import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { type CacheGraph, memoryCache, sleep, useCacheGraph } from './fixtures.js';

let graph: CacheGraph;
let router: TestRouter;

useCacheGraph((started) => (graph = started));

beforeAll(async () => {
  router = await graph.router({ cache: { ...memoryCache, fallback_ttl: '2s' } });
});

afterAll(async () => {
  await router?.close();
});

const PRODUCT = 'query Product($upc: ID!) { product(upc: $upc) { upc name } }';

/** Asks for the same product twice; resolves with how many requests reached the subgraph. */
async function askTwice(upc: string): Promise<number> {
  for (let i = 0; i < 2; i++) {
    const response = await router.query({ query: PRODUCT, variables: { upc } });
    expect(response.body).toEqual({ data: { product: { upc, name: graph.data.products.get(upc)!.name } } });
  }
  return graph.products.calls.length;
}

describe('the Cache-Control rules, row by row', () => {
  // Each row gets its own product key, so no row sees another row's entry.
  const rows: Array<[rule: string, header: string | undefined, cached: boolean]> = [
    ['2: a missing header is not cached', undefined, false],
    ['2: an empty header is not cached', '', false],
    ['2: only unrecognized directives are not cached, and fallback_ttl does not apply', 'x-team-ttl=60, immutable-ish', false],
    ['3: no-store is not cached', 'no-store, max-age=60', false],
    ['4: no-cache is not cached', 'no-cache, max-age=60', false],
    ['4: qualified no-cache is not cached', 'no-cache="set-cookie", max-age=60', false],
    ['4: private is not cached', 'private, max-age=60', false],
    ['5: s-maxage alone is the lifetime', 's-maxage=60', true],
    ['5: s-maxage takes precedence over max-age (0 refuses)', 's-maxage=0, max-age=60', false],
    ['5: s-maxage takes precedence over max-age (max-age 0 ignored)', 'max-age=0, s-maxage=60', true],
    ['6: max-age is the lifetime', 'max-age=60', true],
    ['7: public without a lifetime uses fallback_ttl', 'public', true],
    ['7: must-revalidate without a lifetime uses fallback_ttl', 'must-revalidate', true],
    ['7: proxy-revalidate without a lifetime uses fallback_ttl', 'proxy-revalidate', true],
    ['7: stale-if-error with a duration uses fallback_ttl', 'stale-if-error=60', true],
    ['7: stale-while-revalidate with a duration uses fallback_ttl', 'stale-while-revalidate=60', true],
    ['7: a stale directive needs a valid duration', 'stale-while-revalidate=soon', false],
    ['8: max-age 0 refuses and does not fall through to public', 'public, max-age=0', false],
    ['8: max-age 0 refuses and does not fall through to must-revalidate', 'max-age=0, must-revalidate', false],
    ['8: an invalid duration prevents caching even with public', 'public, max-age=ten', false],
    ['8: a negative duration prevents caching', 'max-age=-5', false],
    ['9: public is optional when a lifetime is present', 'max-age=60', true],
    ['directive names are case-insensitive', 'Public, Max-Age=60', true],
  ];

  rows.forEach(([rule, header, cached], index) => {
    it(`rule ${rule} (${JSON.stringify(header ?? null)})`, async () => {
      const upc = `row${index}`;
      graph.data.products.set(upc, { upc, name: `Row ${index}`, price: index });
      graph.reply.products.cacheControl = header;
      expect(await askTwice(upc)).toBe(cached ? 1 : 2);
    });
  });

  it('rule 1: an answer with GraphQL errors is never cached, whatever its header says', async () => {
    graph.reply.products.cacheControl = 'public, max-age=60';
    for (let i = 0; i < 2; i++) {
      const response = await router.query('{ failing { upc } }');
      expect(response.body).toEqual({
        data: { failing: null },
        errors: [{ message: 'products are down', path: ['failing'] }],
      });
    }
    expect(graph.products.calls).toHaveLength(2);
  });

  it('rule 10: mutations are never cached', async () => {
    graph.reply.products.cacheControl = 'public, max-age=60';
    const rename = 'mutation { rename(upc: "p1", name: "Desk") { upc name } }';
    expect((await router.query(rename)).body).toEqual({ data: { rename: { upc: 'p1', name: 'Desk' } } });
    expect((await router.query(rename)).body).toEqual({ data: { rename: { upc: 'p1', name: 'Desk' } } });
    expect(graph.products.calls).toHaveLength(2);
  });
});

describe('lifetimes', () => {
  it('never serves an entry after its lifetime: max-age, s-maxage over max-age, and fallback_ttl all end', async () => {
    const cases: Array<[string, string]> = [
      ['ttl-max-age', 'max-age=2'],
      ['ttl-s-maxage', 's-maxage=2, max-age=600'],
      ['ttl-fallback', 'public'],
    ];
    for (const [upc, header] of cases) {
      graph.data.products.set(upc, { upc, name: 'Before', price: 1 });
      graph.reply.products.cacheControl = header;
      await router.query({ query: PRODUCT, variables: { upc } });
      graph.data.products.set(upc, { upc, name: 'After', price: 1 });
      const cachedAnswer = await router.query({ query: PRODUCT, variables: { upc } });
      expect(cachedAnswer.body).toEqual({ data: { product: { upc, name: 'Before' } } });
    }
    expect(graph.products.calls).toHaveLength(3);
    await sleep(2100);
    for (const [upc] of cases) {
      const fresh = await router.query({ query: PRODUCT, variables: { upc } });
      expect(fresh.body).toEqual({ data: { product: { upc, name: 'After' } } });
    }
    expect(graph.products.calls).toHaveLength(6);
  });
});
