import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { openOperationsStore, sha256Hex } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput, tempDir } from '../../operations/support/operations.js';
import { collectingLogger, prices, productByUpc, startProducts, topProducts, topProductsData, type LogLine } from './fixtures.js';

let products: TestSubgraph;
let dir: { path: string; remove(): Promise<void> };
const routers: TestRouter[] = [];

const NOT_IN_SAFELIST = {
  errors: [{ message: 'The operation is not registered: only persisted operations may run on this router.', extensions: { code: 'QUERY_NOT_IN_SAFELIST' } }],
};
/** The registered TopProducts text, written differently: other whitespace, commas, a comment. */
const reformatted = `query TopProducts {
  # same fields, other layout
  topProducts { upc, name }
}`;

beforeAll(async () => {
  products = await startProducts();
  dir = await tempDir();
  const store = await openOperationsStore({ provider: 'file', path: dir.path });
  await store.push('default', 'web', [graphqlInput(topProducts)]);
});
afterAll(async () => {
  await Promise.all(routers.map((router) => router.close()));
  await products?.close();
  await dir?.remove();
});

async function start(options: Parameters<typeof usePersistedOperations>[0]): Promise<{ router: TestRouter; lines: LogLine[] }> {
  const { logger, lines } = collectingLogger();
  const router = await startTestRouter({
    subgraphs: [products],
    logger,
    plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path }, ...options })],
  });
  routers.push(router);
  return { router, lines };
}

const modes: Array<{ mode: string; manifest: { enabled: boolean }; headers: Record<string, string> }> = [
  { mode: 'manifest mode', manifest: { enabled: true }, headers: {} },
  { mode: 'lookup mode', manifest: { enabled: false }, headers: { 'graphql-client-name': 'web' } },
];

describe.each(modes)('the safelist in $mode', ({ manifest, headers }) => {
  let router: TestRouter;

  beforeAll(async () => {
    ({ router } = await start({ safelist: true, manifest }));
  });

  it('rejects a free-form operation that is not registered with 403', async () => {
    const response = await router.query({ query: prices, headers });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(NOT_IN_SAFELIST);
    expect(products.calls.filter((call) => call.query.includes('price'))).toEqual([]);
  });

  it('allows the registered text, as sent or after normalization', async () => {
    expect(await router.query({ query: topProducts, headers })).toMatchObject({ status: 200, body: { data: topProductsData } });
    expect(await router.query({ query: reformatted, headers })).toMatchObject({ status: 200, body: { data: topProductsData } });
  });

  it('still runs registered operations by hash', async () => {
    const response = await router.query({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(topProducts) } }, headers });
    expect(response).toMatchObject({ status: 200, body: { data: topProductsData } });
  });

  it('rejects an unregistered text even when its hash is sent with it', async () => {
    const response = await router.query({ query: prices, extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(prices) } }, headers });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(NOT_IN_SAFELIST);
  });
});

/**
 * Ids that are the SHA-256 of ANOTHER text: a Relay alias pushed by a client, or a Cosmo file named by the
 * client's own id. Sending that other text must not pass the safelist: it was never registered.
 */
describe.each(modes)('the safelist in $mode judges texts, not the ids they are stored under', ({ manifest, headers }) => {
  const dirs: Array<{ path: string; remove(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.all(dirs.map((created) => created.remove()));
  });

  it('refuses a text whose SHA-256 is a Relay alias of another operation', async () => {
    const aliased = await tempDir();
    dirs.push(aliased);
    const store = await openOperationsStore({ provider: 'file', path: aliased.path });
    await store.push('default', 'web', [{ ...graphqlInput(topProducts), aliases: [sha256Hex(prices)] }]);
    const { router } = await start({ safelist: true, manifest, storage: { provider: 'file', path: aliased.path } });
    const response = await router.query({ query: prices, headers });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(NOT_IN_SAFELIST);
    // The operation the alias names is registered, and runs by its text.
    expect(await router.query({ query: topProducts, headers })).toMatchObject({ status: 200, body: { data: topProductsData } });
  });

  it('refuses a text whose SHA-256 is the id a Cosmo tree lists another text under', async () => {
    const cosmo = await tempDir();
    dirs.push(cosmo);
    const folder = join(cosmo.path, 'default', 'operations');
    await mkdir(join(folder, 'web'), { recursive: true });
    await writeFile(join(folder, 'web', `${sha256Hex(prices)}.json`), JSON.stringify({ version: 1, body: productByUpc }));
    const operations = { [sha256Hex(prices)]: productByUpc };
    await writeFile(join(folder, 'manifest.json'), JSON.stringify({ version: 1, revision: 'r1', generatedAt: '2026-01-01T00:00:00.000Z', operations }));
    const { router } = await start({ safelist: true, manifest, storage: { provider: 'file', path: cosmo.path } });
    const response = await router.query({ query: prices, headers });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(NOT_IN_SAFELIST);
    // Manifest mode knows every text; lookup mode finds a text by its SHA-256 only, which this file is not named by.
    const registered = await router.query({ query: productByUpc, variables: { upc: 'p1' }, headers });
    if (manifest.enabled) expect(registered).toMatchObject({ status: 200, body: { data: { product: { upc: 'p1' } } } });
    else expect(registered.status).toBe(403);
  });
});

describe('the safelist outside manifest mode', () => {
  it('checks a request without a client name against client "unknown", as Cosmo does', async () => {
    const { router } = await start({ safelist: true });
    const response = await router.query(topProducts);
    expect(response.status).toBe(403);
    expect(response.body).toEqual(NOT_IN_SAFELIST);
    const otherClient = await router.query({ query: topProducts, headers: { 'graphql-client-name': 'ios' } });
    expect(otherClient.status).toBe(403);
    const apollo = await router.query({ query: topProducts, headers: { 'apollographql-client-name': 'web' } });
    expect(apollo).toMatchObject({ status: 200, body: { data: topProductsData } });
  });
});

describe('log_unknown', () => {
  it('logs an unregistered operation and still serves it', async () => {
    const { router, lines } = await start({ log_unknown: true, manifest: { enabled: true } });
    const response = await router.query({ query: prices, operationName: 'Prices', headers: { 'graphql-client-name': 'web' } });
    expect(response).toMatchObject({ status: 200, body: { data: { topProducts: [{ price: 899 }, { price: 1299 }] } } });
    expect(lines.filter((line) => line.msg === 'Unknown operation: not a registered persisted operation')).toEqual([
      expect.objectContaining({ level: 'warn', plugin: 'persisted-operations', client_name: 'web', operation_name: 'Prices', sha256: sha256Hex(prices), query: prices }),
    ]);
  });

  it('does not log registered operations, however they are formatted', async () => {
    const { router, lines } = await start({ log_unknown: true, manifest: { enabled: true } });
    await router.query(topProducts);
    await router.query(reformatted);
    expect(lines.filter((line) => line.msg === 'Unknown operation: not a registered persisted operation')).toEqual([]);
  });

  it('cuts the client name and operation name it logs to 256 characters, as access logs do', async () => {
    const { router, lines } = await start({ log_unknown: true, manifest: { enabled: true } });
    const operationName = `Prices${'N'.repeat(200_000)}`;
    const query = prices.replace('Prices', operationName);
    const response = await router.query({ query, operationName, headers: { 'graphql-client-name': `web${'c'.repeat(10_000)}` } });
    expect(response.status).toBe(200);
    const [line] = lines.filter((l) => l.msg === 'Unknown operation: not a registered persisted operation');
    expect(line).toMatchObject({ operation_name: `${operationName.slice(0, 255)}\u2026`, client_name: `web${'c'.repeat(252)}\u2026`, sha256: sha256Hex(query) });
    expect(String(line!.query)).toHaveLength(2_000);
  });

  it('logs and rejects when the safelist is on as well', async () => {
    const { router, lines } = await start({ log_unknown: true, safelist: true, manifest: { enabled: true } });
    expect((await router.query(prices)).status).toBe(403);
    expect(lines.filter((line) => line.msg === 'Unknown operation: not a registered persisted operation')).toHaveLength(1);
  });
});
