/**
 * An HTTP operations store whose URL carries `user:password@`: every read is
 * sent with HTTP Basic authorization (percent-escapes decoded), as a graph URL
 * is, and the credentials never reach a log line, an error or an answer.
 * A real static host on 127.0.0.1 that requires the credentials.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { HttpStorage, OperationsStore, ReadOnlyStoreError, openOperationsStore, parseStoreLocation, sha256Hex } from '../../../src/operations/index.js';
import { startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput, tempDir } from '../../operations/support/operations.js';
import { startStaticHost, type StaticHost } from '../../operations/support/static-server.js';
import { captureLogs } from '../../support/capture-logs.js';
import { byHash, prices, startProducts, topProducts, topProductsData } from './fixtures.js';

const USER = 'cdn-user';
/** Written percent-encoded in the URL (`s3cr3t%2Fpw%40x`); the host expects it decoded. */
const PASSWORD = 's3cr3t/pw@x';
const WRONG_PASSWORD = 'wr0ng-guess';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`, 'utf8').toString('base64')}`;

let products: TestSubgraph;
let dir: { path: string; remove(): Promise<void> };
let host: StaticHost;

/** The host's URL with credentials written into it. */
function withCredentials(password: string): string {
  return host.url.replace('http://', `http://${USER}:${encodeURIComponent(password)}@`);
}

/** No trace of either password, as written or percent-encoded. */
function expectNoPassword(text: string): void {
  for (const secret of ['s3cr3t', WRONG_PASSWORD, `${USER}:`]) expect(text).not.toContain(secret);
}

beforeAll(async () => {
  products = await startProducts();
  dir = await tempDir();
  const store = await openOperationsStore({ provider: 'file', path: dir.path });
  await store.push('default', 'web', [graphqlInput(topProducts)]);
  await store.push('default', 'relay-app', [{ ...graphqlInput(prices), aliases: ['1b2c3d'] }]);
  await store.close();
  host = await startStaticHost(dir.path, 'ops', { basicAuth: { user: USER, password: PASSWORD } });
});

afterAll(async () => {
  await host?.close();
  await products?.close();
  await dir?.remove();
});

async function routerWith(url: string, manifest = false) {
  const { logger, lines } = captureLogs('debug');
  const router = await startTestRouter({
    subgraphs: [products],
    logger,
    plugins: [
      usePersistedOperations({ enabled: true, storage: { provider: 'http', url }, ...(manifest ? { manifest: { enabled: true, poll_interval: '50ms', poll_jitter: '0s' } } : {}) }),
    ],
  });
  return { router, lines };
}

describe('an HTTP operations store with user:password@ in storage.url', () => {
  it('resolves operations per request through it, sending HTTP Basic authorization; the password is never logged', async () => {
    const before = host.requests.length;
    const { router, lines } = await routerWith(withCredentials(PASSWORD));
    try {
      const response = await router.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'web' } });
      expect(response).toMatchObject({ status: 200, body: { data: topProductsData } });
      const sent = host.requests.slice(before);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((request) => request.authorization === BASIC && request.status === 200)).toBe(true);
      expect(lines.find((line) => line.msg === 'Persisted operations enabled')?.storage).toBe(host.url);
      expectNoPassword(JSON.stringify(lines));
    } finally {
      await router.close();
    }
  });

  it('loads and polls the manifest through it in manifest mode (conditional requests carry the authorization too)', async () => {
    const before = host.requests.length;
    const { router, lines } = await routerWith(withCredentials(PASSWORD), true);
    try {
      const response = await router.query({ extensions: byHash(sha256Hex(prices)) });
      expect(response).toMatchObject({ status: 200, body: { data: { topProducts: [{ price: 899 }, { price: 1299 }] } } });
      await vi.waitFor(() => expect(host.requests.slice(before).some((request) => request.status === 304)).toBe(true), { timeout: 5000 });
      expect(host.requests.slice(before).every((request) => request.authorization === BASIC)).toBe(true);
      expectNoPassword(JSON.stringify(lines));
    } finally {
      await router.close();
    }
  });

  it('with a wrong password: the read fails with PLUGIN_ERROR, and neither the log nor the answer carries the password', async () => {
    const { router, lines } = await routerWith(withCredentials(WRONG_PASSWORD));
    try {
      const response = await router.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'web' } });
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        errors: [{ message: '[persisted-operations] the operations store could not be read; the router log has the reason', extensions: { code: 'PLUGIN_ERROR' } }],
      });
      const logged = JSON.stringify(lines.filter((line) => line.level === 'error'));
      expect(logged).toContain(`cannot read ${host.url}/default/operations/web/`);
      expect(logged).toContain('HTTP 401');
      expectNoPassword(JSON.stringify(lines));
      expectNoPassword(JSON.stringify(response.body));
    } finally {
      await router.close();
    }
  });

  it('in manifest mode with a wrong password, startup fails with an error that does not carry the password', async () => {
    const error = await routerWith(withCredentials(WRONG_PASSWORD), true).then(
      async ({ router }) => {
        await router.close();
        return undefined;
      },
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toContain(host.url);
    expectNoPassword(String((error as Error).message));
    expectNoPassword(String((error as Error).stack));
  });
});

describe('HttpStorage with credentials in its base URL', () => {
  it('keeps them out of location and read-only errors, and a configured Authorization header wins over them', async () => {
    const storage = new HttpStorage(withCredentials(WRONG_PASSWORD), { headers: { Authorization: BASIC } });
    expect(storage.location).toBe(host.url);
    const store = new OperationsStore(storage);
    const read = await store.readManifest('default');
    expect(read.status).toBe('found');
    expect(host.requests.at(-1)).toMatchObject({ authorization: BASIC, status: 200 });
    const refusal = await store.push('default', 'web', [graphqlInput(topProducts)]).catch((caught: unknown) => caught);
    expect(refusal).toBeInstanceOf(ReadOnlyStoreError);
    expect((refusal as Error).message).toContain(host.url);
    expectNoPassword((refusal as Error).message);
  });

  it('parses a --store URL with credentials as an HTTP store and leaves redis:// URLs as they are', () => {
    expect(parseStoreLocation(withCredentials(PASSWORD))).toEqual({ provider: 'http', url: withCredentials(PASSWORD) });
    expect(parseStoreLocation('redis://user:pw@127.0.0.1:6379/2')).toEqual({ provider: 'redis', urls: ['redis://user:pw@127.0.0.1:6379/2'] });
  });
});
