/**
 * The response cache over plan-merged entity calls (one `_entities` call
 * for the objects of several paths) and batched ones (aliased `_entities`
 * parts of one request): entries stay per entity and selection, a repeated
 * query is answered from the cache, and a partial hit sends only the
 * missing entities (of only the parts that miss).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { gatewaysBenchGraph, TWO_ROOT_QUERY } from '../../federation/graphs/gateways-bench.js';
import { memoryCache } from './fixtures.js';

let subgraphs: TestSubgraph[] = [];
let router: TestRouter;
let uncached: TestRouter;

beforeAll(async () => {
  // Entity answers carry a max-age, so the cache stores them.
  subgraphs = await Promise.all(gatewaysBenchGraph().map((definition) => startSubgraph({ ...definition, reply: () => ({ headers: { 'cache-control': 'max-age=60' } }) })));
  router = await startTestRouter({ subgraphs, plugins: [useCacheTags(), useResponseCache({ ...memoryCache, debug: { enabled: true } })] });
  uncached = await startTestRouter({ subgraphs });
});

afterAll(async () => {
  await Promise.all([router?.close(), uncached?.close()]);
  await Promise.all(subgraphs.map((s) => s.close()));
});

function subgraph(name: string): TestSubgraph {
  return subgraphs.find((s) => s.name === name)!;
}

async function send(query: string) {
  for (const s of subgraphs) s.reset();
  const response = await router.query({ query, headers: { 'x-switchyard-cache-debug': 'true' } });
  expect(response.status).toBe(200);
  const { responseCache, ...extensions } = (response.body.extensions ?? {}) as { responseCache?: Array<{ subgraph: string; kind: string; status: string }> };
  return { data: response.body.data, errors: response.body.errors, extensions, statuses: responseCache ?? [], calls: subgraphs.reduce((n, s) => n + s.calls.length, 0) };
}

describe('response cache with merged entity calls', () => {
  it('caches a merged call per entity: the repeated query is answered without subgraph calls', async () => {
    const expected = (await uncached.query(TWO_ROOT_QUERY)).body.data;
    const first = await send(TWO_ROOT_QUERY);
    expect(first.data).toEqual(expected);
    expect(first.calls).toBe(6);
    // Merged calls are ordinary entity fetches to the cache: looked up, not skipped.
    expect(first.statuses.filter((s) => s.kind === 'entity').map((s) => s.status)).toEqual(['miss', 'miss', 'miss', 'miss']);
    const second = await send(TWO_ROOT_QUERY);
    expect(second.data).toEqual(expected);
    expect(second.calls).toBe(0);
    expect(second.statuses.map((s) => s.status)).toEqual(['hit', 'hit', 'hit', 'hit', 'hit', 'hit']);
  });

  it('sends only the missing entities of a merged call that is partly cached', async () => {
    // Top product 1 leads to products 1, 2 and 3; `users` also reaches product 4 (reviewed by user 2):
    // the merged products call finds the first three cached.
    const warm = `{
      topProducts(first: 1) { reviews { author { reviews { product { name } } } } }
    }`;
    await send(warm);
    const query = `{
      users { reviews { product { reviews { author { reviews { product { name } } } } } } }
      topProducts(first: 1) { reviews { author { reviews { product { name } } } } }
    }`;
    const expected = (await uncached.query(query)).body.data;
    const result = await send(query);
    expect(result.data).toEqual(expected);
    const products = subgraph('products').calls.filter((c) => Array.isArray(c.variables.representations));
    expect(products.map((call) => (call.variables.representations as Array<{ upc: string }>).map((r) => r.upc))).toEqual([['4']]);
    expect(result.statuses.some((s) => s.subgraph === 'products' && s.kind === 'entity' && s.status === 'partial_hit')).toBe(true);
  });

  // Products of the users' reviews select { name }; those of the top products' authors' reviews { price }: one batched call.
  const BATCHED = `{
    users { reviews { product { name } } }
    topProducts { reviews { author { reviews { product { price } } } } }
  }`;

  function productCalls() {
    return subgraph('products').calls.filter((call) => call.query.includes('_entities('));
  }

  it('caches each part of a batched call on its own: a part cached by another query is left out of the request', async () => {
    await send('{ users { reviews { product { name } } } }');
    const expected = (await uncached.query(BATCHED)).body.data;
    const first = await send(BATCHED);
    expect(first.data).toEqual(expected);
    // Only the { price } part goes out; the { name } part is served from the entries the first query wrote.
    const [call, ...others] = productCalls();
    expect(others).toHaveLength(0);
    expect(call!.query).toContain('_1: _entities(representations: $r1) { ... on Product { price } }');
    expect(call!.query).not.toContain('_0:');
    expect(first.statuses.find((s) => s.subgraph === 'products' && s.kind === 'entity')?.status).toBe('partial_hit');
    const second = await send(BATCHED);
    expect(second.data).toEqual(expected);
    expect(second.calls).toBe(0);
    expect(second.statuses.every((s) => s.status === 'hit')).toBe(true);
  });

  it('sends only the missing entities of a batched part that is partly cached', async () => {
    // Product 1's weight is cached (top product 1's authors' reviews reach products 1, 2 and 3 in a { weight } fetch).
    await send('{ topProducts(first: 1) { reviews { author { reviews { product { weight } } } } } }');
    const query = `{
      users { reviews { product { title(lang: "de") } } }
      topProducts { reviews { author { reviews { product { weight } } } } }
    }`;
    const expected = (await uncached.query(query)).body.data;
    const result = await send(query);
    expect(result.data).toEqual(expected);
    const [call] = productCalls();
    const sent = (name: string) => (call!.variables[name] as Array<{ upc: string }>).map((r) => r.upc);
    expect(call!.query).toContain('_0: _entities');
    expect(sent('r1')).toEqual(['4']);
    expect(sent('r0').length).toBeGreaterThan(0);
  });
});
