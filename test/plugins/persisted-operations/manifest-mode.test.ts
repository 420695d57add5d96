import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { openOperationsStore, sha256Hex, type OperationsStore } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput, tempDir } from '../../operations/support/operations.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { startStaticHost, type StaticHost } from '../../operations/support/static-server.js';
import { byHash, collectingLogger, postJson, prices, productByUpc, startProducts, topProducts, topProductsData, type LogLine } from './fixtures.js';

let products: TestSubgraph;
let dir: { path: string; remove(): Promise<void> };
let store: OperationsStore;
let router: TestRouter | undefined;
let lines: LogLine[];

const NOT_FOUND_BODY = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };
const FAST_POLL = { enabled: true, poll_interval: '50ms', poll_jitter: '20ms' };

beforeAll(async () => {
  products = await startProducts();
});
afterAll(async () => {
  await products?.close();
});
beforeEach(async () => {
  dir = await tempDir();
  store = await openOperationsStore({ provider: 'file', path: dir.path });
});
afterEach(async () => {
  await router?.close();
  router = undefined;
  await dir.remove();
});

async function start(options: Parameters<typeof usePersistedOperations>[0] = {}): Promise<TestRouter> {
  const logs = collectingLogger();
  lines = logs.lines;
  router = await startTestRouter({
    subgraphs: [products],
    logger: logs.logger,
    plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path }, manifest: FAST_POLL, ...options })],
  });
  return router;
}

function loadedRevisions(): unknown[] {
  return lines.filter((line) => line.msg === 'Persisted operations manifest loaded').map((line) => line.revision);
}

async function currentRevision(): Promise<string> {
  const read = await store.readManifest('default');
  if (read.status !== 'found') throw new Error('no manifest');
  return read.manifest.revision;
}

describe('manifest mode', () => {
  it('loads the manifest at startup and runs operations of any client, with or without a client name', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    await store.push('default', 'ios', [graphqlInput(productByUpc)]);
    const served = await start();
    expect(loadedRevisions()).toEqual([await currentRevision()]);
    expect(await served.query({ extensions: byHash(sha256Hex(topProducts)) })).toMatchObject({ status: 200, body: { data: topProductsData } });
    const other = await served.query({ extensions: byHash(sha256Hex(productByUpc)), variables: { upc: 'p1' }, headers: { 'graphql-client-name': 'web' } });
    expect(other).toMatchObject({ status: 200, body: { data: { product: { upc: 'p1', name: 'Table', price: 899 } } } });
  });

  it("resolves a Relay id from the manifest's aliases, sent as doc_id", async () => {
    await store.push('default', 'relay-app', [{ ...graphqlInput(prices), aliases: ['9f8e7d6c'] }]);
    const served = await start();
    expect(await postJson(served, { doc_id: '9f8e7d6c' })).toMatchObject({ status: 200, body: { data: { topProducts: [{ price: 899 }, { price: 1299 }] } } });
  });

  it('picks up a push after the next poll, without a restart', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start();
    expect((await served.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual(NOT_FOUND_BODY);
    await store.push('default', 'web', [graphqlInput(prices)]);
    await vi.waitFor(
      async () => expect((await served.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual({ data: { topProducts: [{ price: 899 }, { price: 1299 }] } }),
      {
        timeout: 5000,
        interval: 25,
      },
    );
    expect(loadedRevisions()).toHaveLength(2);
  });

  it('refuses a deleted id after the next poll', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start();
    expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: topProductsData });
    await store.delete('default', 'web', sha256Hex(topProducts));
    const revision = await currentRevision();
    await vi.waitFor(() => expect(loadedRevisions()).toContain(revision), { timeout: 5000, interval: 10 });
    const response = await served.query({ extensions: byHash(sha256Hex(topProducts)) });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('private, no-cache, must-revalidate');
    expect(response.body).toEqual(NOT_FOUND_BODY);
  });

  it('keeps the previous manifest and logs an error when a new one does not parse', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start();
    const good = await currentRevision();
    await writeFile(join(dir.path, 'default', 'manifest.json'), '{"version": 1, "revision": "broken", "operations": ');
    await vi.waitFor(() => expect(lines.some((line) => line.msg === 'Persisted operations manifest is invalid; keeping the previous one')).toBe(true), {
      timeout: 5000,
      interval: 10,
    });
    const error = lines.find((line) => line.msg === 'Persisted operations manifest is invalid; keeping the previous one');
    expect(error).toMatchObject({ level: 'error', plugin: 'persisted-operations', graph: 'default', revision: good, reason: expect.stringContaining('not JSON') });
    expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: topProductsData });
    // Logged once per bad version, not on every poll.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines.filter((line) => line.msg === 'Persisted operations manifest is invalid; keeping the previous one')).toHaveLength(1);
  });

  it("swaps in a manifest whose id is not the SHA-256 of its text, serving that text under that id (Cosmo's ids are client-supplied)", async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start();
    const relisted = { version: 1, revision: 'relisted', generatedAt: new Date().toISOString(), operations: { [sha256Hex(topProducts)]: prices } };
    await writeFile(join(dir.path, 'default', 'manifest.json'), JSON.stringify(relisted));
    await vi.waitFor(() => expect(loadedRevisions()).toContain('relisted'), { timeout: 5000, interval: 10 });
    expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: { topProducts: [{ price: 899 }, { price: 1299 }] } });
    expect(lines.some((line) => line.msg === 'Persisted operations manifest is invalid; keeping the previous one')).toBe(false);
  });

  it('keeps the previous manifest when a new one is malformed (an operation text that is not a string)', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start();
    await writeFile(join(dir.path, 'default', 'manifest.json'), JSON.stringify({ version: 1, revision: 'bad', operations: { abc: 42 } }));
    await vi.waitFor(() => expect(lines.some((line) => line.msg === 'Persisted operations manifest is invalid; keeping the previous one')).toBe(true), { timeout: 5000 });
    const error = lines.find((line) => line.msg === 'Persisted operations manifest is invalid; keeping the previous one');
    expect(error).toMatchObject({ reason: 'operation "abc": the text must be a string' });
    expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: topProductsData });
  });

  it('starts with no manifest yet, warns, and serves operations once they are pushed', async () => {
    const served = await start();
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'Persisted operations manifest not found; every persisted operation is unknown until one is pushed' }),
    );
    expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual(NOT_FOUND_BODY);
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    await vi.waitFor(async () => expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: topProductsData }), { timeout: 5000 });
  });

  it('fails startup on a manifest that does not parse', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    await writeFile(join(dir.path, 'default', 'manifest.json'), 'not json');
    await expect(start()).rejects.toThrow(`the manifest of graph "default" at ${dir.path} is invalid: not JSON`);
  });

  it('serves every request while manifests are swapped under load', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start({ manifest: { enabled: true, poll_interval: '10ms', poll_jitter: '0ms' } });
    const swaps = 6;
    let loading = true;
    const pusher = (async () => {
      const deadline = Date.now() + 15_000;
      for (let i = 0; loadedRevisions().length <= swaps && Date.now() < deadline; i++) {
        const loaded = loadedRevisions().length;
        await store.push('default', 'web', [graphqlInput(`query Extra${i} { topProducts { upc } }`)]);
        while (loadedRevisions().length === loaded && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      loading = false;
    })();
    const failures: unknown[] = [];
    let ok = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (loading) {
          const response = await served.query({ extensions: byHash(sha256Hex(topProducts)) });
          if (response.status === 200 && JSON.stringify(response.body) === JSON.stringify({ data: topProductsData })) ok++;
          else failures.push(response.body);
        }
      }),
    );
    await pusher;
    expect(failures).toEqual([]);
    expect(loadedRevisions().length).toBeGreaterThan(swaps);
    expect(ok).toBeGreaterThan(swaps * 8);
  }, 30_000);
});

describe('manifest mode over HTTP and Redis', () => {
  let host: StaticHost;
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  beforeEach(async () => {
    host = await startStaticHost(dir.path);
  });
  afterEach(async () => {
    await host.close();
  });

  it('polls an HTTP store with conditional requests and swaps in a new revision', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start({ storage: { provider: 'http', url: host.url } });
    const first = await currentRevision();
    await vi.waitFor(() => expect(host.requests.filter((request) => request.status === 304).length).toBeGreaterThanOrEqual(2), { timeout: 5000 });
    expect(host.requests.filter((request) => request.status === 304).every((request) => request.ifNoneMatch === `"${first}"`)).toBe(true);
    await store.push('default', 'web', [graphqlInput(prices)]);
    await vi.waitFor(async () => expect((await served.query({ extensions: byHash(sha256Hex(prices)) })).body.data).toBeDefined(), { timeout: 5000 });
    const second = await currentRevision();
    await vi.waitFor(() => expect(host.requests.some((request) => request.status === 304 && request.ifNoneMatch === `"${second}"`)).toBe(true), { timeout: 5000 });
  });

  it('keeps serving the previous manifest while the HTTP store is down, and logs it', async () => {
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const served = await start({ storage: { provider: 'http', url: host.url } });
    await host.close();
    await vi.waitFor(() => expect(lines.some((line) => line.msg === 'Persisted operations manifest could not be read; keeping the previous one')).toBe(true), {
      timeout: 5000,
    });
    expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: topProductsData });
    host = await startStaticHost(dir.path);
  });

  it('reloads from a host without ETag whatever the revision holds, and logs a bad or missing manifest once, not on every poll', async () => {
    let answer = { status: 200, body: JSON.stringify({ version: 1, revision: 'rév-✓', operations: { a: topProducts } }) };
    let polls = 0;
    const bare = createServer((_request, response) => {
      polls++;
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const morePolls = async (count: number) => {
      const target = polls + count;
      await vi.waitFor(() => expect(polls).toBeGreaterThanOrEqual(target), { timeout: 5000, interval: 10 });
    };
    try {
      const served = await start({ storage: { provider: 'http', url: `http://127.0.0.1:${(bare.address() as AddressInfo).port}/ops` } });
      expect(loadedRevisions()).toEqual(['rév-✓']);
      // A revision no header can carry (non-Latin-1 text, a line break) must not stop hot reload.
      answer = { status: 200, body: JSON.stringify({ version: 1, revision: 'line\nbreak', operations: { b: prices } }) };
      await vi.waitFor(() => expect(loadedRevisions()).toEqual(['rév-✓', 'line\nbreak']), { timeout: 5000, interval: 10 });
      answer = { status: 200, body: JSON.stringify({ version: 1, revision: 'r3', operations: { c: topProducts } }) };
      await vi.waitFor(() => expect(loadedRevisions()).toContain('r3'), { timeout: 5000, interval: 10 });
      expect((await postJson(served, { documentId: 'c' })).body).toEqual({ data: topProductsData });
      expect(lines.filter((line) => line.level === 'error')).toEqual([]);

      answer = { status: 200, body: '{"version": 1, "revision": ' };
      await morePolls(6);
      answer = { status: 404, body: '' };
      await morePolls(6);
      expect(lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual([
        'Persisted operations manifest is invalid; keeping the previous one',
        'Persisted operations manifest disappeared; keeping the previous one',
      ]);
      expect((await postJson(served, { documentId: 'c' })).body).toEqual({ data: topProductsData });
    } finally {
      bare.closeAllConnections();
      await new Promise((resolve) => bare.close(resolve));
    }
  });

  it('loads and polls the manifest from Redis', async () => {
    const redisStore = await openOperationsStore({ provider: 'redis', urls: [`${redis.url}/2`] });
    await redisStore.push('default', 'web', [graphqlInput(topProducts)]);
    const logs = collectingLogger();
    lines = logs.lines;
    router = await startTestRouter({
      subgraphs: [products],
      logger: logs.logger,
      config: { storage_providers: { sharedstore: [{ id: 'ops', urls: [`${redis.url}/2`] }] } },
      plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'ops' }, manifest: FAST_POLL })],
    });
    expect((await router.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: topProductsData });
    await redisStore.delete('default', 'web', sha256Hex(topProducts));
    await vi.waitFor(async () => expect((await router!.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual(NOT_FOUND_BODY), { timeout: 5000 });
    await redisStore.close();
  });

  it('closes promptly while the Redis store is frozen in the middle of a poll', async () => {
    const redisStore = await openOperationsStore({ provider: 'redis', urls: [`${redis.url}/4`] });
    await redisStore.push('default', 'web', [graphqlInput(topProducts)]);
    await redisStore.close();
    const frozen = await startTestRouter({
      subgraphs: [products],
      logger: collectingLogger().logger,
      config: { storage_providers: { sharedstore: [{ id: 'ops', urls: [`${redis.url}/4`] }] } },
      plugins: [
        usePersistedOperations({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'ops' }, manifest: { enabled: true, poll_interval: '10ms', poll_jitter: '0ms' } }),
      ],
    });
    const pid = Number(/process_id:(\d+)/.exec(await redis.cli('INFO', 'server'))?.[1]);
    process.kill(pid, 'SIGSTOP');
    try {
      // Requests are served from the manifest in memory meanwhile.
      expect((await frozen.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual({ data: topProductsData });
      const started = Date.now();
      await frozen.close();
      // The poll in progress gets 1 s, closing the connection 2 s more.
      expect(Date.now() - started).toBeLessThan(4_500);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });
});

describe('a Cosmo manifest with client-supplied ids', () => {
  // As Cosmo's control plane writes it: ids as the clients pushed them (Relay, Apollo manifests), no `aliases`, compact JSON.
  const hexId = 'ab'.repeat(32); // 64 hex characters, not the SHA-256 of its text
  const upperId = sha256Hex('some other text').toUpperCase();
  const cosmoManifest = {
    version: 1,
    revision: sha256Hex('revision'),
    generatedAt: '2026-01-01T00:00:00.000Z',
    operations: { [hexId]: topProducts, '7f3a9c1e': prices, [upperId]: productByUpc, ['__proto__']: prices },
  };

  async function startWithCosmoManifest(options: Parameters<typeof usePersistedOperations>[0] = {}, manifest: object = cosmoManifest): Promise<TestRouter> {
    await mkdir(join(dir.path, 'default'), { recursive: true });
    await writeFile(join(dir.path, 'default', 'manifest.json'), JSON.stringify(manifest));
    return start(options);
  }

  it('loads at startup and finds each operation by the id sent as sha256Hash, without a client name', async () => {
    const served = await startWithCosmoManifest();
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'Persisted operations manifest loaded', revision: cosmoManifest.revision, operations: 4 }));
    expect(await served.query({ extensions: byHash(hexId) })).toMatchObject({ status: 200, body: { data: topProductsData } });
    // Hex ids are case-insensitive, whichever case the manifest and the request use.
    const product = await served.query({ extensions: byHash(upperId.toLowerCase()), variables: { upc: 'p2' }, headers: { 'apollographql-client-name': 'ios' } });
    expect(product).toMatchObject({ status: 200, body: { data: { product: { upc: 'p2', name: 'Couch', price: 1299 } } } });
    // The SHA-256 of a listed text is not an id the manifest has.
    expect((await served.query({ extensions: byHash(sha256Hex(topProducts)) })).body).toEqual(NOT_FOUND_BODY);
  });

  it('finds an id that is not 64 hex characters when sent as documentId or doc_id', async () => {
    const served = await startWithCosmoManifest();
    const pricesData = { data: { topProducts: [{ price: 899 }, { price: 1299 }] } };
    expect(await postJson(served, { documentId: '7f3a9c1e' })).toMatchObject({ status: 200, body: pricesData });
    expect(await postJson(served, { doc_id: '__proto__' })).toMatchObject({ status: 200, body: pricesData });
    // As in Cosmo, extensions.persistedQuery.sha256Hash must be 64 hex characters.
    const asHash = await served.query({ extensions: byHash('7f3a9c1e') });
    expect(asHash.status).toBe(400);
    expect(asHash.body).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_INVALID_HASH' } }] });
  });

  it('refuses text sent with an id that is not its SHA-256, before any lookup (as Cosmo)', async () => {
    const served = await startWithCosmoManifest();
    const response = await served.query({ query: topProducts, extensions: byHash(hexId) });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH' } }] });
  });

  it('lets the safelist recognise a listed text, whatever id it is listed under', async () => {
    const served = await startWithCosmoManifest({ safelist: true });
    expect(await served.query(topProducts)).toMatchObject({ status: 200, body: { data: topProductsData } });
    expect(await served.query({ query: topProducts, extensions: byHash(sha256Hex(topProducts)) })).toMatchObject({ status: 200, body: { data: topProductsData } });
    expect((await served.query('query Names { topProducts { name } }')).status).toBe(403);
  });

  it('loads a manifest without generatedAt, as Cosmo does', async () => {
    const { generatedAt: _omitted, ...withoutDate } = cosmoManifest;
    const served = await startWithCosmoManifest({}, withoutDate);
    expect(await served.query({ extensions: byHash(hexId) })).toMatchObject({ status: 200, body: { data: topProductsData } });
  });

  it.each([
    ['a version other than 1', { ...cosmoManifest, version: 2 }, 'unsupported version 2; only version 1 is read'],
    ['no revision', { ...cosmoManifest, revision: '' }, '"revision" must be a non-empty string'],
    ['no operations', { version: 1, revision: 'r' }, '"operations" must be an object of id -> operation text'],
    ['a text that is not a string', { version: 1, revision: 'r', operations: { abc: null } }, 'operation "abc": the text must be a string'],
  ])('still fails startup on a malformed manifest: %s', async (_case, manifest, reason) => {
    await expect(startWithCosmoManifest({}, manifest)).rejects.toThrow(`the manifest of graph "default" at ${dir.path} is invalid: ${reason}`);
  });
});
