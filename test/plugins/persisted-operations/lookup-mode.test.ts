import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import type { GraphQLResponseBody } from '../../../src/index.js';
import { openOperationsStore, sha256Hex, type OperationsStore } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput, tempDir } from '../../operations/support/operations.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { startStaticHost, type StaticHost } from '../../operations/support/static-server.js';
import { byHash, collectingLogger, postJson, prices, productByUpc, startProducts, topProducts, topProductsData } from './fixtures.js';

let products: TestSubgraph;
let dir: { path: string; remove(): Promise<void> };
let store: OperationsStore;
let router: TestRouter;

beforeAll(async () => {
  products = await startProducts();
  dir = await tempDir();
  store = await openOperationsStore({ provider: 'file', path: dir.path });
  await store.push('default', 'web', [graphqlInput(topProducts), graphqlInput(productByUpc)]);
  await store.push('default', 'relay-app', [{ ...graphqlInput(prices), aliases: ['1b2c3d'] }]);
  router = await startTestRouter({
    subgraphs: [products],
    plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path } })],
  });
});

afterAll(async () => {
  await router?.close();
  await products?.close();
  await dir?.remove();
});

const NOT_FOUND_BODY = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };

describe('persisted operations looked up per request', () => {
  it('runs a registered operation by hash and returns exactly what its text returns', async () => {
    const asText = await router.query({ query: productByUpc, variables: { upc: 'p2' } });
    const asHash = await router.query({ extensions: byHash(sha256Hex(productByUpc)), variables: { upc: 'p2' }, headers: { 'graphql-client-name': 'web' } });
    expect(asHash.status).toBe(200);
    expect(asHash.body).toEqual({ data: { product: { upc: 'p2', name: 'Couch', price: 1299 } } });
    expect(asHash.body).toEqual(asText.body);
  });

  it('runs by hash over GET too, and accepts the hash in upper case', async () => {
    const response = await router.query({ method: 'GET', extensions: byHash(sha256Hex(topProducts).toUpperCase()), headers: { 'graphql-client-name': 'web' } });
    expect(response).toMatchObject({ status: 200, body: { data: topProductsData } });
  });

  it('answers an unknown id with 200 PersistedQueryNotFound that no cache may keep', async () => {
    const response = await router.query({ extensions: byHash(sha256Hex('query { nothing }')), headers: { 'graphql-client-name': 'web' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('private, no-cache, must-revalidate');
    expect(response.body).toEqual(NOT_FOUND_BODY);
  });

  it('restricts lookups to the client the operation was pushed for', async () => {
    const response = await router.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'relay-app' } });
    expect(response.body).toEqual(NOT_FOUND_BODY);
  });

  it('looks a request without a client name up as client "unknown", as Cosmo does', async () => {
    // `web` pushed this one; a request naming no client does not see it.
    expect((await router.query({ extensions: byHash(sha256Hex(productByUpc)), variables: { upc: 'p1' } })).body).toEqual(NOT_FOUND_BODY);
    expect((await router.query({ extensions: byHash(sha256Hex(productByUpc)), variables: { upc: 'p1' }, headers: { 'graphql-client-name': '' } })).body).toEqual(NOT_FOUND_BODY);
    await store.push('default', 'unknown', [graphqlInput(topProducts)]);
    const response = await router.query({ extensions: byHash(sha256Hex(topProducts)) });
    expect(response).toMatchObject({ status: 200, body: { data: topProductsData } });
    expect(JSON.stringify(response.body)).not.toContain('CLIENT_NAME');
  });

  it('reads the client name from apollographql-client-name when graphql-client-name is absent', async () => {
    const apollo = await router.query({ extensions: byHash(sha256Hex(productByUpc)), variables: { upc: 'p1' }, headers: { 'apollographql-client-name': 'web' } });
    expect(apollo).toMatchObject({ status: 200, body: { data: { product: { upc: 'p1', name: 'Table', price: 899 } } } });
    // graphql-client-name wins when both are sent.
    const both = await router.query({
      extensions: byHash(sha256Hex(productByUpc)),
      variables: { upc: 'p1' },
      headers: { 'graphql-client-name': 'relay-app', 'apollographql-client-name': 'web' },
    });
    expect(both.body).toEqual(NOT_FOUND_BODY);
  });

  it('refuses a hash that does not match the text sent with it, before any lookup', async () => {
    const response = await router.query({ query: prices, extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'web' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      errors: [{ message: 'The sha256Hash does not match the SHA-256 of the query text.', extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH' } }],
    });
  });

  it('runs hash and matching text as the text', async () => {
    const response = await router.query({ query: prices, extensions: byHash(sha256Hex(prices)) });
    expect(response).toMatchObject({ status: 200, body: { data: { topProducts: [{ price: 899 }, { price: 1299 }] } } });
  });

  it('refuses a hash that is not 64 hex characters', async () => {
    for (const sha256Hash of ['abc', 'z'.repeat(64), 42]) {
      const response = await router.query({ extensions: { persistedQuery: { version: 1, sha256Hash } }, headers: { 'graphql-client-name': 'web' } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        errors: [{ message: 'extensions.persistedQuery.sha256Hash must be a SHA-256 hash: 64 hexadecimal characters.', extensions: { code: 'PERSISTED_QUERY_INVALID_HASH' } }],
      });
    }
  });

  it('refuses persisted query versions other than 1', async () => {
    const response = await router.query({ extensions: { persistedQuery: { version: 2, sha256Hash: sha256Hex(topProducts) } }, headers: { 'graphql-client-name': 'web' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      errors: [{ message: 'Unsupported persisted query version 2; only version 1 is supported.', extensions: { code: 'PERSISTED_QUERY_UNSUPPORTED_VERSION' } }],
    });
    const notAnObject = await router.query({ extensions: { persistedQuery: 'v1' }, headers: { 'graphql-client-name': 'web' } });
    expect(notAnObject.status).toBe(400);
    expect(notAnObject.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_UNSUPPORTED_VERSION');
  });

  it('refuses a version nested thousands deep or a huge one with a short 400, never echoing it', async () => {
    const headers = { 'graphql-client-name': 'web' };
    // As a client sends it: JSON text nesting 20,000 arrays (JSON.parse reads it; serializing it back overflows the stack).
    const nested = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const response = await router.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
      body: `{"extensions":{"persistedQuery":{"version":${nested},"sha256Hash":"${sha256Hex(topProducts)}"}}}`,
    });
    const deep = { status: response.status, body: (await response.json()) as GraphQLResponseBody };
    expect(deep.status).toBe(400);
    expect(deep.body.errors?.[0]).toEqual({
      message: 'Unsupported persisted query version (an array); only version 1 is supported.',
      extensions: { code: 'PERSISTED_QUERY_UNSUPPORTED_VERSION' },
    });
    const huge = await router.query({ extensions: { persistedQuery: { version: 'v'.repeat(900_000), sha256Hash: sha256Hex(topProducts) } }, headers });
    expect(huge.status).toBe(400);
    expect(huge.body.errors?.[0]?.message).toBe(`Unsupported persisted query version "${'v'.repeat(20)}…"; only version 1 is supported.`);
  });

  it('resolves a Relay id sent as doc_id, and a documentId in sha256: form', async () => {
    const relay = await postJson(router, { doc_id: '1b2c3d' }, { 'graphql-client-name': 'relay-app' });
    expect(relay).toMatchObject({ status: 200, body: { data: { topProducts: [{ price: 899 }, { price: 1299 }] } } });
    const documentId = await postJson(router, { documentId: `sha256:${sha256Hex(productByUpc)}`, variables: { upc: 'p1' } }, { 'graphql-client-name': 'web' });
    expect(documentId).toMatchObject({ status: 200, body: { data: { product: { upc: 'p1', name: 'Table', price: 899 } } } });
    const unknown = await postJson(router, { doc_id: 'nope' }, { 'graphql-client-name': 'relay-app' });
    expect(unknown.body).toEqual(NOT_FOUND_BODY);
  });

  it('still serves free-form operations when the safelist is off', async () => {
    const response = await router.query('{ topProducts { upc } }');
    expect(response.body).toEqual({ data: { topProducts: [{ upc: 'p1' }, { upc: 'p2' }] } });
  });
});

describe('lookups in other stores', () => {
  let redis: RedisServer;
  let host: StaticHost;

  beforeAll(async () => {
    redis = await startRedis();
    host = await startStaticHost(dir.path);
  });
  afterAll(async () => {
    await redis?.stop();
    await host?.close();
  });

  it('runs an operation pushed to Redis, through a storage_providers.sharedstore entry', async () => {
    const redisStore = await openOperationsStore({ provider: 'redis', urls: [redis.url] });
    await redisStore.push('default', 'web', [graphqlInput(topProducts)]);
    await redisStore.close();
    const redisRouter = await startTestRouter({
      subgraphs: [products],
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
      plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } })],
    });
    try {
      const response = await redisRouter.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'web' } });
      expect(response).toMatchObject({ status: 200, body: { data: topProductsData } });
    } finally {
      await redisRouter.close();
    }
  });

  it('answers PLUGIN_ERROR within the command timeout while the Redis store is frozen, and serves again once it thaws', async () => {
    const redisStore = await openOperationsStore({ provider: 'redis', urls: [`${redis.url}/3`] });
    await redisStore.push('default', 'web', [graphqlInput(topProducts)]);
    await redisStore.close();
    const redisRouter = await startTestRouter({
      subgraphs: [products],
      logger: collectingLogger().logger,
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [`${redis.url}/3`] }] } },
      plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } })],
    });
    const pid = Number(/process_id:(\d+)/.exec(await redis.cli('INFO', 'server'))?.[1]);
    // SIGSTOP: the connection stays open and nothing answers (a frozen or overloaded server).
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const response = await redisRouter.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'web' } });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(response.status).toBe(500);
      expect(response.body.errors?.[0]?.extensions?.code).toBe('PLUGIN_ERROR');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    try {
      const thawed = await redisRouter.query({ extensions: byHash(sha256Hex(topProducts)), headers: { 'graphql-client-name': 'web' } });
      expect(thawed).toMatchObject({ status: 200, body: { data: topProductsData } });
    } finally {
      await redisRouter.close();
    }
  });

  it('fails startup on a provider_id that names no shared store', async () => {
    await expect(
      startTestRouter({ subgraphs: [products], plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'nope' } })] }),
    ).rejects.toThrow('[persisted-operations] persisted_operations.storage.provider_id: unknown shared store "nope" (none is declared under storage_providers.sharedstore)');
  });

  it('answers PLUGIN_ERROR and logs the reason when the store cannot be read', async () => {
    const down = await startStaticHost(dir.path);
    await down.close();
    const { logger, lines } = collectingLogger();
    const httpRouter = await startTestRouter({
      subgraphs: [products],
      logger,
      plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'http', url: down.url } })],
    });
    try {
      const response = await httpRouter.query({ extensions: byHash(sha256Hex(prices)), headers: { 'graphql-client-name': 'relay-app' } });
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        errors: [{ message: '[persisted-operations] the operations store could not be read; the router log has the reason', extensions: { code: 'PLUGIN_ERROR' } }],
      });
      const logged = lines.find((line) => line.level === 'error' && line.plugin === 'persisted-operations');
      expect(JSON.stringify(logged)).toContain(`cannot read ${down.url}/default/operations/relay-app/`);
    } finally {
      await httpRouter.close();
    }
  });

  it('answers PersistedQueryNotFound when the HTTP store answers 403 for a missing file, and remembers the miss', async () => {
    let reads = 0;
    const denying = createServer((_request, response) => {
      reads++;
      response.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
    });
    await new Promise<void>((resolve) => denying.listen(0, '127.0.0.1', resolve));
    const httpRouter = await startTestRouter({
      subgraphs: [products],
      plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'http', url: `http://127.0.0.1:${(denying.address() as AddressInfo).port}/ops` } })],
    });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await httpRouter.query({ extensions: byHash('d'.repeat(64)), headers: { 'graphql-client-name': 'web' } });
        // An Apollo client sends the text after this answer; a 500 would make it give up.
        expect(response.status).toBe(200);
        expect(response.body).toEqual(NOT_FOUND_BODY);
      }
      expect(reads).toBe(1);
    } finally {
      await httpRouter.close();
      denying.closeAllConnections();
      await new Promise((resolve) => denying.close(resolve));
    }
  });

  it('runs an operation from a read-only HTTP store, and resolves a Relay alias there', async () => {
    const httpRouter = await startTestRouter({
      subgraphs: [products],
      plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'http', url: host.url } })],
    });
    try {
      const response = await httpRouter.query({ extensions: byHash(sha256Hex(prices)), headers: { 'graphql-client-name': 'relay-app' } });
      expect(response).toMatchObject({ status: 200, body: { data: { topProducts: [{ price: 899 }, { price: 1299 }] } } });
      expect(await store.lookup('default', 'relay-app', '1b2c3d')).toMatchObject({ id: sha256Hex(prices) });
      // A second request is served from the lookup cache: no new request reaches the host.
      const before = host.requests.length;
      await httpRouter.query({ extensions: byHash(sha256Hex(prices)), headers: { 'graphql-client-name': 'relay-app' } });
      expect(host.requests.length).toBe(before);
    } finally {
      await httpRouter.close();
    }
  });
});
