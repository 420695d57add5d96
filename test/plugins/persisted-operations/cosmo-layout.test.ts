/**
 * A store tree as Cosmo's control plane writes it under its organization
 * folder, copied unchanged: `<graph>/operations/<client>/<id>.json` files of
 * `{"version":1,"body":"..."}` (no `id`; the name is the client's id, the
 * client name percent-encoded) and the manifest at
 * `<graph>/operations/manifest.json`. Served from a directory and over HTTP.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { sha256Hex } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { tempDir } from '../../operations/support/operations.js';
import { startStaticHost, type StaticHost } from '../../operations/support/static-server.js';
import { byHash, collectingLogger, postJson, prices, productByUpc, startProducts, topProducts, topProductsData } from './fixtures.js';

const NOT_FOUND_BODY = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };
const pricesData = { data: { topProducts: [{ price: 899 }, { price: 1299 }] } };
const productData = { data: { product: { upc: 'p1', name: 'Table', price: 899 } } };
const opaqueHex = 'cd'.repeat(32);

let products: TestSubgraph;
let dir: { path: string; remove(): Promise<void> };
let host: StaticHost;
const routers: TestRouter[] = [];

async function writeJson(path: string, value: unknown): Promise<void> {
  const file = join(dir.path, ...path.split('/'));
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, JSON.stringify(value));
}

beforeAll(async () => {
  products = await startProducts();
  dir = await tempDir();
  // Cosmo's per-operation files (publishPersistedOperations.ts): `{version: 1, body}` under the client's folder.
  await writeJson(`default/operations/web/${sha256Hex(topProducts)}.json`, { version: 1, body: topProducts });
  await writeJson('default/operations/web/7f3a9c1e.json', { version: 1, body: prices });
  await writeJson(`default/operations/web/${opaqueHex}.json`, { version: 1, body: productByUpc });
  await writeJson(`default/operations/unknown/${sha256Hex(prices)}.json`, { version: 1, body: prices });
  await writeJson(`default/operations/${encodeURIComponent('my app')}/${sha256Hex(topProducts)}.json`, { version: 1, body: topProducts });
  // Cosmo's manifest path (OperationsRepository.generateAndUploadManifest), compact JSON, ids as pushed.
  await writeJson('default/operations/manifest.json', {
    version: 1,
    revision: sha256Hex('r1'),
    generatedAt: '2026-01-01T00:00:00.000Z',
    operations: { [sha256Hex(topProducts)]: topProducts, '7f3a9c1e': prices, [opaqueHex]: productByUpc },
  });
  host = await startStaticHost(dir.path);
});

afterEach(async () => {
  await Promise.all(routers.splice(0).map((router) => router.close()));
});

afterAll(async () => {
  await host?.close();
  await products?.close();
  await dir?.remove();
});

async function start(options: Parameters<typeof usePersistedOperations>[0]): Promise<TestRouter> {
  const router = await startTestRouter({ subgraphs: [products], logger: collectingLogger().logger, plugins: [usePersistedOperations({ enabled: true, ...options })] });
  routers.push(router);
  return router;
}

const stores = [
  { name: 'a directory', storage: () => ({ provider: 'file' as const, path: dir.path }) },
  { name: 'an HTTP host', storage: () => ({ provider: 'http' as const, url: host.url }) },
];

describe.each(stores)("Cosmo's per-operation files from $name (lookup mode)", ({ storage }) => {
  it('runs an operation by hash for its client, with the client name from either header', async () => {
    const router = await start({ storage: storage() });
    expect(await router.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'web' } })).toMatchObject({
      status: 200,
      body: { data: topProductsData },
    });
    expect(await router.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'apollographql-client-name': 'my app' } })).toMatchObject({
      status: 200,
      body: { data: topProductsData },
    });
    expect((await router.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'ios' } })).body).toEqual(NOT_FOUND_BODY);
  });

  it('runs an operation by a client-supplied id: 64 hex characters as sha256Hash, any id as documentId', async () => {
    const router = await start({ storage: storage() });
    const byOpaqueHex = await router.query({ extensions: byHash(opaqueHex), variables: { upc: 'p1' }, headers: { 'graphql-client-name': 'web' } });
    expect(byOpaqueHex).toMatchObject({ status: 200, body: productData });
    expect(await postJson(router, { documentId: '7f3a9c1e' }, { 'graphql-client-name': 'web' })).toMatchObject({ status: 200, body: pricesData });
  });

  it('looks a request without a client name up under client "unknown"', async () => {
    const router = await start({ storage: storage() });
    expect(await router.query({ extensions: byHash(sha256Hex(prices)) })).toMatchObject({ status: 200, body: pricesData });
    expect((await router.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual(NOT_FOUND_BODY);
  });
});

describe.each(stores)("Cosmo's manifest path from $name (manifest mode)", ({ storage }) => {
  it('loads <graph>/operations/manifest.json when <graph>/manifest.json is absent', async () => {
    const router = await start({ storage: storage(), manifest: { enabled: true } });
    expect(await router.query({ extensions: byHash(opaqueHex), variables: { upc: 'p1' } })).toMatchObject({ status: 200, body: productData });
    expect(await postJson(router, { doc_id: '7f3a9c1e' })).toMatchObject({ status: 200, body: pricesData });
  });
});

describe("Cosmo's manifest path, polled", () => {
  it("picks up a new revision at Cosmo's path, and prefers <graph>/manifest.json once one is written", async () => {
    const poll = { enabled: true, poll_interval: '50ms', poll_jitter: '10ms' };
    const router = await start({ storage: { provider: 'file', path: dir.path }, manifest: poll });
    const names = 'query Names { topProducts { name } }';
    try {
      await writeJson('default/operations/manifest.json', { version: 1, revision: sha256Hex('r2'), operations: { n1: names } });
      await vi.waitFor(async () => expect((await postJson(router, { documentId: 'n1' })).body).toEqual({ data: { topProducts: [{ name: 'Table' }, { name: 'Couch' }] } }), {
        timeout: 5000,
      });
      await writeJson('default/manifest.json', { version: 1, revision: 'ours', generatedAt: '2026-01-01T00:00:00.000Z', operations: { n2: names } });
      await vi.waitFor(async () => expect((await postJson(router, { documentId: 'n2' })).body).toEqual({ data: { topProducts: [{ name: 'Table' }, { name: 'Couch' }] } }), {
        timeout: 5000,
      });
      expect((await postJson(router, { documentId: 'n1' })).body).toEqual(NOT_FOUND_BODY);
    } finally {
      await rm(join(dir.path, 'default', 'manifest.json'), { force: true });
    }
  });
});
