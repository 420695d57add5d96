import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAutomaticPersistedQueries } from '../../../plugins/automatic-persisted-queries/index.js';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { openOperationsStore, sha256Hex } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput, tempDir } from '../../operations/support/operations.js';
import { byHash, prices, productByUpc, startProducts, topProducts, topProductsData } from '../persisted-operations/fixtures.js';

let products: TestSubgraph;
const routers: TestRouter[] = [];

const NOT_FOUND_BODY = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };
const pricesData = { topProducts: [{ price: 899 }, { price: 1299 }] };

beforeAll(async () => {
  products = await startProducts();
});
afterAll(async () => {
  await Promise.all(routers.map((router) => router.close()));
  await products?.close();
});

async function start(plugins: Parameters<typeof startTestRouter>[0]['plugins']): Promise<TestRouter> {
  const router = await startTestRouter({ subgraphs: [products], plugins });
  routers.push(router);
  return router;
}

describe('automatic persisted queries', () => {
  it('follows the Apollo protocol: PersistedQueryNotFound first, then hash and text register the query', async () => {
    const router = await start([useAutomaticPersistedQueries({ enabled: true })]);
    const first = await router.query({ extensions: byHash(sha256Hex(topProducts)) });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('private, no-cache, must-revalidate');
    expect(first.body).toEqual(NOT_FOUND_BODY);
    const register = await router.query({ query: topProducts, extensions: byHash(sha256Hex(topProducts)) });
    expect(register).toMatchObject({ status: 200, body: { data: topProductsData } });
    products.reset();
    const byHashOnly = await router.query({ extensions: byHash(sha256Hex(topProducts)) });
    expect(byHashOnly).toMatchObject({ status: 200, body: { data: topProductsData } });
    expect(products.calls).toHaveLength(1);
  });

  it('works over GET, as Apollo Client sends hash-only queries', async () => {
    const router = await start([useAutomaticPersistedQueries({ enabled: true })]);
    expect((await router.query({ method: 'GET', extensions: byHash(sha256Hex(prices)) })).body).toEqual(NOT_FOUND_BODY);
    await router.query({ method: 'GET', query: prices, extensions: byHash(sha256Hex(prices)) });
    expect(await router.query({ method: 'GET', extensions: byHash(sha256Hex(prices)) })).toMatchObject({ status: 200, body: { data: pricesData } });
  });

  it('refuses to register a text under a hash that is not its own', async () => {
    const router = await start([useAutomaticPersistedQueries({ enabled: true })]);
    const response = await router.query({ query: prices, extensions: byHash(sha256Hex(topProducts)) });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    expect((await router.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual(NOT_FOUND_BODY);
  });

  it('refuses malformed hashes and other versions', async () => {
    const router = await start([useAutomaticPersistedQueries({ enabled: true })]);
    const badHash = await router.query({ extensions: { persistedQuery: { version: 1, sha256Hash: 'nope' } } });
    expect([badHash.status, badHash.body.errors?.[0]?.extensions?.code]).toEqual([400, 'PERSISTED_QUERY_INVALID_HASH']);
    const badVersion = await router.query({ extensions: { persistedQuery: { version: 3, sha256Hash: sha256Hex(prices) } } });
    expect([badVersion.status, badVersion.body.errors?.[0]?.extensions?.code]).toEqual([400, 'PERSISTED_QUERY_UNSUPPORTED_VERSION']);
  });

  it('keeps at most cache.size queries, forgetting the least recently used', async () => {
    const router = await start([useAutomaticPersistedQueries({ enabled: true, cache: { size: 1 } })]);
    await router.query({ query: topProducts, extensions: byHash(sha256Hex(topProducts)) });
    await router.query({ query: prices, extensions: byHash(sha256Hex(prices)) });
    expect((await router.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual(NOT_FOUND_BODY);
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual({ data: pricesData });
  });

  it('forgets a query after cache.ttl', async () => {
    const router = await start([useAutomaticPersistedQueries({ enabled: true, cache: { ttl: '1s' } })]);
    await router.query({ query: prices, extensions: byHash(sha256Hex(prices)) });
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual({ data: pricesData });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual(NOT_FOUND_BODY);
  });

  it('refuses a duration without a unit for cache.ttl', () => {
    expect(() => useAutomaticPersistedQueries({ enabled: true, cache: { ttl: 100 as unknown as string } })).toThrow(
      'automatic_persisted_queries.cache.ttl: expected a duration with a unit, such as "30s", got the number 100',
    );
  });
});

describe('automatic persisted queries beside registered operations', () => {
  let dir: { path: string; remove(): Promise<void> };

  beforeAll(async () => {
    dir = await tempDir();
    const store = await openOperationsStore({ provider: 'file', path: dir.path });
    await store.push('default', 'web', [graphqlInput(productByUpc)]);
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it('serves registered operations and automatic ones, and answers an unknown hash once', async () => {
    const router = await start([
      useAutomaticPersistedQueries({ enabled: true }),
      usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path }, manifest: { enabled: true } }),
    ]);
    const registered = await router.query({ extensions: byHash(sha256Hex(productByUpc)), variables: { upc: 'p1' } });
    expect(registered).toMatchObject({ status: 200, body: { data: { product: { upc: 'p1', name: 'Table', price: 899 } } } });
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual(NOT_FOUND_BODY);
    await router.query({ query: prices, extensions: byHash(sha256Hex(prices)) });
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual({ data: pricesData });
  });

  it.each(['APQ first', 'persisted operations first'])('cannot slip an unregistered text past the safelist, nor keep it (%s)', async (order) => {
    const apq = useAutomaticPersistedQueries({ enabled: true });
    const persisted = usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path }, manifest: { enabled: true }, safelist: true });
    const router = await start(order === 'APQ first' ? [apq, persisted] : [persisted, apq]);
    products.reset();
    const register = await router.query({ query: prices, extensions: byHash(sha256Hex(prices)) });
    expect(register.status).toBe(403);
    expect(register.body.errors?.[0]?.extensions?.code).toBe('QUERY_NOT_IN_SAFELIST');
    // The refused text was not kept: the hash is unknown, and nothing was fetched for it.
    const hashOnly = await router.query({ extensions: byHash(sha256Hex(prices)) });
    expect(hashOnly.body).toEqual(NOT_FOUND_BODY);
    expect(products.calls.filter((call) => call.query.includes('price'))).toEqual([]);
  });

  it('lets APQ resolve a hash for a client that sends no client name outside manifest mode', async () => {
    const router = await start([useAutomaticPersistedQueries({ enabled: true }), usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path } })]);
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual(NOT_FOUND_BODY);
    await router.query({ query: prices, extensions: byHash(sha256Hex(prices)) });
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual({ data: pricesData });
  });
});
