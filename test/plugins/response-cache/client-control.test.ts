/**
 * `response_cache.client_control`: a client's `Cache-Control: no-cache` (or
 * `Pragma: no-cache`) skips the cache reads of its request and refreshes
 * the entries it fetches; ignored when the switch is off.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { responseCacheOptionsSchema } from '../../../plugins/response-cache/index.js';
import { asksForFreshAnswer } from '../../../plugins/response-cache/respond-hook.js';
import { type CacheGraph, memoryCache, useCacheGraph } from './fixtures.js';

const QUERY = 'query Top($first: Int) { products(first: $first) { upc name reviews { body } } }';

let graph: CacheGraph;
useCacheGraph((started) => (graph = started));

let router: TestRouter | undefined;
afterEach(async () => {
  await router?.close();
  router = undefined;
});

async function ask(headers: Record<string, string> = {}) {
  const response = await router!.query({ query: QUERY, variables: { first: 2 }, headers: { 'x-switchyard-cache-debug': 'true', ...headers } });
  const body = response.body as {
    data: { products: Array<{ name: string; reviews: Array<{ body: string }> }> };
    extensions?: { responseCache?: Array<{ status: string }> };
  };
  return { name: body.data.products[0]!.name, review: body.data.products[0]!.reviews[0]!.body, statuses: body.extensions?.responseCache?.map((item) => item.status) };
}

function change() {
  graph.data.products.get('p1')!.name = 'Desk';
  graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
}

describe('client_control', () => {
  it('with no-cache, skips reads, answers fresh data and writes it for the next requests', async () => {
    router = await graph.router({ cache: { ...memoryCache, client_control: { enabled: true }, debug: { enabled: true } } });
    await ask();
    expect(await ask()).toMatchObject({ name: 'Table', statuses: ['hit', 'hit'] });
    change();
    expect(await ask()).toMatchObject({ name: 'Table', review: 'Love it!' });

    const calls = graph.products.calls.length;
    expect(await ask({ 'cache-control': 'no-cache' })).toEqual({ name: 'Desk', review: 'Changed my mind.', statuses: ['miss', 'miss'] });
    expect(graph.products.calls.length).toBe(calls + 1);
    // Refreshed: the next plain request is a hit with the new data.
    expect(await ask()).toEqual({ name: 'Desk', review: 'Changed my mind.', statuses: ['hit', 'hit'] });
    expect(graph.products.calls.length).toBe(calls + 1);
  });

  it('takes Pragma: no-cache too', async () => {
    router = await graph.router({ cache: { ...memoryCache, client_control: { enabled: true } } });
    await ask();
    change();
    expect(await ask({ pragma: 'no-cache' })).toMatchObject({ name: 'Desk' });
    expect(await ask()).toMatchObject({ name: 'Desk' });
  });

  it('is off by default: the header is ignored', async () => {
    router = await graph.router({ cache: memoryCache });
    await ask();
    change();
    expect(await ask({ 'cache-control': 'no-cache', pragma: 'no-cache' })).toMatchObject({ name: 'Table', review: 'Love it!' });
    expect(graph.products.calls).toHaveLength(1);
  });
});

describe('client_control.shared_key', () => {
  const KEY = 'refresh-key-0123456789abcdef-0123456789';

  it('lets only requests carrying the key refresh; others are answered from the cache', async () => {
    router = await graph.router({ cache: { ...memoryCache, client_control: { enabled: true, shared_key: KEY }, debug: { enabled: true } } });
    await ask();
    change();
    // A browser's hard reload sends no-cache: without the key it is served from the cache as usual.
    expect(await ask({ 'cache-control': 'no-cache' })).toMatchObject({ name: 'Table', statuses: ['hit', 'hit'] });
    expect(await ask({ 'cache-control': 'no-cache', 'x-switchyard-cache-refresh-key': KEY })).toMatchObject({ name: 'Desk', statuses: ['miss', 'miss'] });
    expect(await ask()).toMatchObject({ name: 'Desk', statuses: ['hit', 'hit'] });
  });

  it('never sends the key to subgraphs, even under a header rule that propagates every header', async () => {
    router = await graph.router({
      cache: { ...memoryCache, client_control: { enabled: true, shared_key: KEY } },
      config: { headers: { all: { request: [{ op: 'propagate', matching: '.*' }] } } },
    });
    await ask({ 'x-tenant': 'acme', 'x-switchyard-cache-refresh-key': KEY });
    change();
    expect(await ask({ 'cache-control': 'no-cache', 'x-tenant': 'acme', 'x-switchyard-cache-refresh-key': KEY })).toMatchObject({ name: 'Desk' });
    const calls = [...graph.products.calls, ...graph.reviews.calls];
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      expect(call.headers['x-tenant']).toBe('acme');
      expect(call.headers).not.toHaveProperty('x-switchyard-cache-refresh-key');
    }
  });

  it('refuses a wrong key with 400 and a message', async () => {
    router = await graph.router({ cache: { ...memoryCache, client_control: { enabled: true, shared_key: KEY } } });
    const response = await router.query({ query: QUERY, headers: { 'cache-control': 'no-cache', 'x-switchyard-cache-refresh-key': 'guess' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ errors: [{ message: 'Invalid x-switchyard-cache-refresh-key header.', extensions: { code: 'BAD_REQUEST' } }] });
    expect(graph.products.calls).toHaveLength(0);
  });

  it('ignores the key header when no key is set, and refuses a key shorter than 32 characters', async () => {
    router = await graph.router({ cache: { ...memoryCache, client_control: { enabled: true } } });
    expect((await router.query({ query: QUERY, headers: { 'x-switchyard-cache-refresh-key': 'anything' } })).status).toBe(200);
    const refused = responseCacheOptionsSchema.safeParse({ ...memoryCache, client_control: { enabled: true, shared_key: 'short' } });
    expect(refused.error?.issues[0]).toMatchObject({ path: ['client_control', 'shared_key'], message: 'must be empty or at least 32 characters (it has 5)' });
  });
});

describe('asksForFreshAnswer', () => {
  it('reads no-cache from Cache-Control or Pragma, not max-age=0', () => {
    expect(asksForFreshAnswer({ 'cache-control': 'no-cache' })).toBe(true);
    expect(asksForFreshAnswer({ 'cache-control': 'max-stale=5, No-Cache' })).toBe(true);
    expect(asksForFreshAnswer({ pragma: 'no-cache' })).toBe(true);
    expect(asksForFreshAnswer({ 'cache-control': 'max-age=0' })).toBe(false);
    expect(asksForFreshAnswer({ 'cache-control': 'no-store' })).toBe(false);
    expect(asksForFreshAnswer({})).toBe(false);
  });
});
