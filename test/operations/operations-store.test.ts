import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DirectoryStorage,
  HttpStorage,
  OperationsStore,
  ReadOnlyStoreError,
  openOperationsStore,
  parseManifest,
  sha256Hex,
  type OperationsManifest,
} from '../../src/operations/index.js';
import { startRedis, startRedisCluster, type RedisCluster, type RedisServer } from '../support/redis.js';
import { startStaticHost, type StaticHost } from './support/static-server.js';
import { graphqlInput, priceQuery, productQuery, tempDir, topProductsQuery } from './support/operations.js';

let redis: RedisServer;
let cluster: RedisCluster;
let redisDb = 0;

beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

const clock = (() => {
  let tick = Date.parse('2025-03-01T10:00:00.000Z');
  return () => new Date((tick += 1000));
})();

interface Provider {
  readonly name: string;
  open(): Promise<{ store: OperationsStore; cleanup(): Promise<void> }>;
}

const providers: Provider[] = [
  {
    name: 'a directory',
    async open() {
      const dir = await tempDir();
      const store = await openOperationsStore({ provider: 'file', path: dir.path });
      return { store: new OperationsStore(store.storage, { now: clock }), cleanup: async () => dir.remove() };
    },
  },
  {
    name: 'Redis',
    async open() {
      // One database per test keeps the tests apart on one server.
      const db = (redisDb = (redisDb % 15) + 1);
      const opened = await openOperationsStore({ provider: 'redis', urls: [`${redis.url}/${db}`] });
      const store = new OperationsStore(opened.storage, { now: clock });
      return {
        store,
        cleanup: async () => {
          const cleaner = await import('@keyv/redis');
          const client = cleaner.createClient({ url: `${redis.url}/${db}` });
          await client.connect();
          await client.flushDb();
          await client.close();
          await store.close();
        },
      };
    },
  },
  {
    name: 'a Redis Cluster',
    async open() {
      const opened = await openOperationsStore({ provider: 'redis', urls: cluster.urls, cluster: true });
      const store = new OperationsStore(opened.storage, { now: clock });
      return {
        store,
        cleanup: async () => {
          await store.close();
          await Promise.all(cluster.nodes.map((node) => node.cli('FLUSHALL')));
        },
      };
    },
  },
];

async function manifestOf(store: OperationsStore, graph = 'default'): Promise<OperationsManifest> {
  const read = await store.readManifest(graph);
  if (read.status !== 'found') throw new Error(`no manifest: ${read.status}`);
  return read.manifest;
}

describe.each(providers)('the operations store in $name', (provider) => {
  let store: OperationsStore;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ store, cleanup } = await provider.open());
  });
  afterEach(async () => {
    await cleanup();
  });

  it('reports created on the first push and up to date on the second', async () => {
    const inputs = [graphqlInput(topProductsQuery), graphqlInput(productQuery)];
    expect(await store.push('default', 'web', inputs)).toEqual([
      { id: sha256Hex(topProductsQuery), name: 'TopProducts', status: 'created' },
      { id: sha256Hex(productQuery), name: 'Product', status: 'created' },
    ]);
    expect(await store.push('default', 'web', [...inputs, graphqlInput(priceQuery)])).toEqual([
      { id: sha256Hex(topProductsQuery), name: 'TopProducts', status: 'up to date' },
      { id: sha256Hex(productQuery), name: 'Product', status: 'up to date' },
      { id: sha256Hex(priceQuery), name: 'Prices', status: 'created' },
    ]);
  });

  it('keeps operations per client: the same operation is created for a new client', async () => {
    await store.push('default', 'web', [graphqlInput(topProductsQuery)]);
    expect(await store.push('default', 'ios', [graphqlInput(topProductsQuery)])).toEqual([{ id: sha256Hex(topProductsQuery), name: 'TopProducts', status: 'created' }]);
    expect(await store.clients('default')).toEqual(['ios', 'web']);
    expect(await store.lookup('default', 'ios', sha256Hex(topProductsQuery))).toEqual({ id: sha256Hex(topProductsQuery), body: topProductsQuery });
    expect(await store.lookup('default', 'android', sha256Hex(topProductsQuery))).toBeUndefined();
  });

  it('writes a Cosmo-format manifest that follows every push and delete with a new revision', async () => {
    await store.push('default', 'web', [graphqlInput(topProductsQuery)]);
    const first = await manifestOf(store);
    expect(first).toEqual({
      version: 1,
      revision: expect.any(String),
      generatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      operations: { [sha256Hex(topProductsQuery)]: topProductsQuery },
    });
    await store.push('default', 'ios', [graphqlInput(productQuery)]);
    const second = await manifestOf(store);
    expect(second.revision).not.toBe(first.revision);
    expect(second.operations).toEqual({ [sha256Hex(topProductsQuery)]: topProductsQuery, [sha256Hex(productQuery)]: productQuery });
    await store.delete('default', 'web', sha256Hex(topProductsQuery));
    const third = await manifestOf(store);
    expect(third.revision).not.toBe(second.revision);
    expect(third.operations).toEqual({ [sha256Hex(productQuery)]: productQuery });
  });

  it('keeps an operation in the manifest while another client still has it', async () => {
    await store.push('default', 'web', [graphqlInput(topProductsQuery)]);
    await store.push('default', 'ios', [graphqlInput(topProductsQuery)]);
    await store.delete('default', 'web', sha256Hex(topProductsQuery));
    expect((await manifestOf(store)).operations).toEqual({ [sha256Hex(topProductsQuery)]: topProductsQuery });
    expect(await store.lookup('default', 'web', sha256Hex(topProductsQuery))).toBeUndefined();
  });

  it('lists graph, client, id, name, type, aliases and first push time', async () => {
    await store.push('default', 'web', [graphqlInput(topProductsQuery)]);
    await store.push('default', 'ios', [{ ...graphqlInput(productQuery), aliases: ['relay-1'] }]);
    await store.push('default', 'web', [graphqlInput(topProductsQuery), graphqlInput(priceQuery)]);
    const rows = await store.list('default');
    expect(rows).toEqual([
      { graph: 'default', client: 'ios', id: sha256Hex(productQuery), name: 'Product', type: 'query', aliases: ['relay-1'], firstPushedAt: expect.any(String) },
      { graph: 'default', client: 'web', id: sha256Hex(topProductsQuery), name: 'TopProducts', type: 'query', aliases: [], firstPushedAt: expect.any(String) },
      { graph: 'default', client: 'web', id: sha256Hex(priceQuery), name: 'Prices', type: 'query', aliases: [], firstPushedAt: expect.any(String) },
    ]);
    expect(rows[1]!.firstPushedAt < rows[2]!.firstPushedAt).toBe(true);
    expect(await store.list('default', 'ios')).toHaveLength(1);
    expect(await store.list('other')).toEqual([]);
  });

  it('resolves and deletes by a Relay alias, and lists the alias in the manifest', async () => {
    await store.push('default', 'relay', [{ ...graphqlInput(productQuery), aliases: ['5d41402abc4b2a76b9719d911017c592'] }]);
    expect(await store.lookup('default', 'relay', '5d41402abc4b2a76b9719d911017c592')).toEqual({ id: sha256Hex(productQuery), body: productQuery });
    expect((await manifestOf(store)).aliases).toEqual({ '5d41402abc4b2a76b9719d911017c592': sha256Hex(productQuery) });
    expect(await store.delete('default', 'relay', '5d41402abc4b2a76b9719d911017c592')).toMatchObject({ id: sha256Hex(productQuery) });
    expect(await store.lookup('default', 'relay', '5d41402abc4b2a76b9719d911017c592')).toBeUndefined();
    expect(await store.lookup('default', 'relay', sha256Hex(productQuery))).toBeUndefined();
  });

  it('reports an operation sent twice in one push once, keeping the aliases of both', async () => {
    const pushed = await store.push('default', 'relay', [
      { ...graphqlInput(productQuery), aliases: ['from-a'] },
      { ...graphqlInput(productQuery), aliases: ['from-b'] },
    ]);
    expect(pushed).toEqual([{ id: sha256Hex(productQuery), name: 'Product', status: 'created' }]);
    expect(await store.list('default', 'relay')).toEqual([expect.objectContaining({ aliases: ['from-a', 'from-b'] })]);
    expect(await store.lookup('default', 'relay', 'from-b')).toEqual({ id: sha256Hex(productQuery), body: productQuery });
  });

  it('takes any string as an alias, __proto__ included', async () => {
    await store.push('default', 'relay', [{ ...graphqlInput(productQuery), aliases: ['__proto__'] }]);
    expect((await manifestOf(store)).aliases).toEqual(Object.assign(Object.create(null) as object, { ['__proto__']: sha256Hex(productQuery) }));
    expect(await store.lookup('default', 'relay', '__proto__')).toEqual({ id: sha256Hex(productQuery), body: productQuery });
  });

  it('refuses an alias that already names another operation, pushing nothing', async () => {
    await store.push('default', 'relay', [{ ...graphqlInput(productQuery), aliases: ['x1'] }]);
    const revision = (await manifestOf(store)).revision;
    await expect(store.push('default', 'relay', [graphqlInput(priceQuery), { ...graphqlInput(topProductsQuery), aliases: ['x1'] }])).rejects.toThrow(
      `"x1" cannot be an alias of operation ${sha256Hex(topProductsQuery)} (TopProducts) for client "relay": it is already an alias of operation ${sha256Hex(productQuery)} (Product) of client "relay"`,
    );
    expect((await manifestOf(store)).revision).toBe(revision);
    expect(await store.list('default', 'relay')).toHaveLength(1);
  });

  it('finds an operation by the SHA-256 of its normalized text', async () => {
    const spaced = 'query TopProducts {\n  topProducts {\n    upc,\n    name # the name\n  }\n}\n';
    await store.push('default', 'web', [graphqlInput(spaced)]);
    const normalized = graphqlInput(spaced).normalizedId!;
    expect(await store.lookup('default', 'web', normalized)).toEqual({ id: sha256Hex(spaced), body: spaced });
  });

  it('answers undefined for a deletion of an unknown id and for unusable names', async () => {
    expect(await store.delete('default', 'web', sha256Hex('nothing'))).toBeUndefined();
    expect(await store.lookup('..', 'web', sha256Hex('nothing'))).toBeUndefined();
    await expect(store.push('default', '', [graphqlInput(topProductsQuery)])).rejects.toThrow('the client name is empty');
  });

  it('answers unchanged to a manifest read with the current tag', async () => {
    await store.push('default', 'web', [graphqlInput(topProductsQuery)]);
    const read = await store.readManifest('default');
    if (read.status !== 'found') throw new Error('expected a manifest');
    expect(await store.readManifest('default', read.tag)).toEqual({ status: 'unchanged' });
    await store.push('default', 'web', [graphqlInput(priceQuery)]);
    expect((await store.readManifest('default', read.tag)).status).toBe('found');
  });

  it('keeps every push when several writers push at once', async () => {
    const texts = Array.from({ length: 8 }, (_, i) => `query Q${i} { topProducts { upc } }`);
    await Promise.all(texts.map((text, i) => store.push('default', `client-${i % 2}`, [graphqlInput(text)])));
    expect(Object.keys((await manifestOf(store)).operations).sort()).toEqual(texts.map((text) => sha256Hex(text)).sort());
    expect(await store.list('default')).toHaveLength(8);
  });
});

describe('the operations store over HTTP', () => {
  let dir: { path: string; remove(): Promise<void> };
  let host: StaticHost;

  beforeEach(async () => {
    dir = await tempDir();
    host = await startStaticHost(dir.path);
    const writer = await openOperationsStore({ provider: 'file', path: dir.path });
    await writer.push('default', 'web client', [{ ...graphqlInput(productQuery), aliases: ['relay/1'] }]);
  });
  afterEach(async () => {
    await host.close();
    await dir.remove();
  });

  it('reads the layout a directory store wrote, client names and aliases included', async () => {
    const store = new OperationsStore(new HttpStorage(host.url));
    expect(await store.lookup('default', 'web client', sha256Hex(productQuery))).toEqual({ id: sha256Hex(productQuery), body: productQuery });
    expect(await store.lookup('default', 'web client', 'relay/1')).toEqual({ id: sha256Hex(productQuery), body: productQuery });
    expect(await store.lookup('default', 'web client', sha256Hex('unknown'))).toBeUndefined();
    expect(await store.list('default')).toEqual([expect.objectContaining({ client: 'web client', id: sha256Hex(productQuery), aliases: ['relay/1'] })]);
  });

  it('polls the manifest with If-None-Match and gets 304 while it is unchanged', async () => {
    const store = new OperationsStore(new HttpStorage(host.url));
    const read = await store.readManifest('default');
    if (read.status !== 'found') throw new Error('expected a manifest');
    const onDisk = parseManifest(await readFile(join(dir.path, 'default', 'manifest.json'), 'utf8'));
    expect(read.manifest).toEqual(onDisk);
    expect(read.tag).toBe(`"${onDisk.revision}"`);
    expect(await store.readManifest('default', read.tag)).toEqual({ status: 'unchanged' });
    expect(host.requests.filter((request) => request.path.endsWith('manifest.json'))).toEqual([
      { path: '/ops/default/manifest.json', ifNoneMatch: undefined, status: 200 },
      { path: '/ops/default/manifest.json', ifNoneMatch: `"${onDisk.revision}"`, status: 304 },
    ]);
  });

  it('refuses push and delete as read-only', async () => {
    const store = new OperationsStore(new HttpStorage(host.url));
    await expect(store.push('default', 'web', [graphqlInput(topProductsQuery)])).rejects.toThrow(ReadOnlyStoreError);
    await expect(store.delete('default', 'web', sha256Hex(productQuery))).rejects.toThrow(
      `the operations store at ${host.url} is read-only (an HTTP store); push to a directory or Redis store and serve that instead`,
    );
  });

  it('names the URL when the host cannot be reached', async () => {
    await host.close();
    const store = new OperationsStore(new HttpStorage(host.url, { timeoutMs: 2000 }));
    await expect(store.readManifest('default')).rejects.toThrow(`cannot read ${host.url}/default/manifest.json: `);
    host = await startStaticHost(dir.path);
  });
});

describe('an HTTP store that answers oddly', () => {
  type Handler = (request: IncomingMessage, response: ServerResponse) => void;
  let handle: Handler;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((request, response) => handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads a 403 as a missing file, as an S3 bucket without ListBucket answers for one', async () => {
    handle = (_request, response) => void response.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
    const store = new OperationsStore(new HttpStorage(base));
    expect(await store.lookup('default', 'web', sha256Hex('unknown'))).toBeUndefined();
    expect(await store.readManifest('default')).toEqual({ status: 'missing' });
  });

  it('stops reading an operation file past its byte limit, declared or streamed, without buffering the rest', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let written = 0;
    let closed: Promise<void> = Promise.resolve();
    handle = (request, response) => {
      if (request.url?.includes('declared')) {
        response.writeHead(200, { 'content-length': String(50 * chunk.length) });
        response.write(chunk);
        return;
      }
      closed = new Promise((resolve) => response.on('close', () => resolve()));
      response.writeHead(200);
      response.write('{"version":1,"body":"');
      // 200 MiB at most, as fast as the reader takes it.
      const pump = () => {
        while (written < 200 * chunk.length && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end('"}');
      };
      pump();
    };
    const storage = new HttpStorage(base, { maxOperationBytes: 64 * 1024 });
    await expect(storage.read('default/operations/web/declared.json')).rejects.toThrow(/over the 65536 bytes limit/);
    const started = Date.now();
    await expect(storage.read('default/operations/web/streamed.json')).rejects.toThrow(
      `cannot read ${base}/default/operations/web/streamed.json: the body is over the 65536 bytes limit`,
    );
    await closed;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(written).toBeLessThan(64 * chunk.length);
  });

  it('reloads a manifest whose revision cannot stand in a header, from a host that gives no ETag', async () => {
    let body = JSON.stringify({ version: 1, revision: 'rév-✓', operations: { a: priceQuery } });
    const validators: Array<string | undefined> = [];
    handle = (request, response) => {
      validators.push(request.headers['if-none-match']);
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    };
    const store = new OperationsStore(new HttpStorage(base));
    const first = await store.readManifest('default');
    expect(first).toMatchObject({ status: 'found', manifest: { revision: 'rév-✓' }, tag: undefined });
    body = JSON.stringify({ version: 1, revision: 'line\nbreak', operations: { b: priceQuery } });
    const second = await store.readManifest('default', first.status === 'found' ? first.tag : undefined);
    expect(second).toMatchObject({ status: 'found', manifest: { revision: 'line\nbreak' }, tag: undefined });
    // A validator a header cannot carry is left out rather than failing the read.
    await expect(new HttpStorage(base).readIfChanged('default/manifest.json', '"rév-✓"')).resolves.toMatchObject({ status: 'found' });
    expect(validators).toEqual([undefined, undefined, undefined]);
  });
});

describe('manifests and operation files as Cosmo writes them', () => {
  it('parses ids that are not the SHA-256 of their text, lower-casing only hex ids', () => {
    const upper = sha256Hex('another text').toUpperCase();
    const manifest = parseManifest(
      JSON.stringify({ version: 1, revision: 'r', operations: { '7f3a9c1e': priceQuery, [upper]: productQuery, ['__proto__']: topProductsQuery, Relay_ID: priceQuery } }),
    );
    expect(Object.entries(manifest.operations)).toEqual([
      ['7f3a9c1e', priceQuery],
      [upper.toLowerCase(), productQuery],
      ['__proto__', topProductsQuery],
      ['Relay_ID', priceQuery],
    ]);
    expect(manifest.generatedAt).toBe('');
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it('still refuses what Cosmo refuses, with the reason', () => {
    expect(() => parseManifest('{"version": 2, "revision": "r", "operations": {}}')).toThrow('unsupported version 2; only version 1 is read');
    expect(() => parseManifest('{"version": 1, "operations": {}}')).toThrow('"revision" must be a non-empty string');
    expect(() => parseManifest('{"version": 1, "revision": "r"}')).toThrow('"operations" must be an object of id -> operation text');
    expect(() => parseManifest('{"version": 1, "revision": "r", "operations": {"a": 1}}')).toThrow('operation "a": the text must be a string');
    expect(() => parseManifest('{"version": 1, "revision": "r", "generatedAt": 5, "operations": {}}')).toThrow('"generatedAt" must be a string');
  });

  it("reads Cosmo's operation files and its manifest path from a directory store", async () => {
    const dir = await tempDir();
    try {
      const storage = new DirectoryStorage(dir.path);
      await storage.commit('g', [
        [
          { path: 'g/operations/my%20app/7f3a9c1e.json', text: JSON.stringify({ version: 1, body: priceQuery }) },
          { path: 'g/operations/manifest.json', text: JSON.stringify({ version: 1, revision: 'cosmo', operations: { '7f3a9c1e': priceQuery } }) },
        ],
      ]);
      const store = new OperationsStore(storage);
      expect(await store.lookup('g', 'my app', '7f3a9c1e')).toEqual({ id: sha256Hex(priceQuery), body: priceQuery });
      const read = await store.readManifest('g');
      expect(read).toMatchObject({ status: 'found', manifest: { revision: 'cosmo', operations: { '7f3a9c1e': priceQuery } } });
      expect(await store.readManifest('g', read.status === 'found' ? read.tag : undefined)).toEqual({ status: 'unchanged' });
      // A push writes <graph>/manifest.json, which is read from then on.
      await store.push('g', 'web', [graphqlInput(topProductsQuery)]);
      const after = await store.readManifest('g', read.status === 'found' ? read.tag : undefined);
      expect(after.status === 'found' && Object.keys(after.manifest.operations)).toEqual([sha256Hex(topProductsQuery)]);
    } finally {
      await dir.remove();
    }
  });

  it('does not carry a manifest text into a push unless it hashes to its id', async () => {
    const dir = await tempDir();
    try {
      const store = await openOperationsStore({ provider: 'file', path: dir.path });
      await store.push('default', 'web', [graphqlInput(topProductsQuery)]);
      await writeFile(join(dir.path, 'default', 'manifest.json'), JSON.stringify({ version: 1, revision: 'x', operations: { [sha256Hex(topProductsQuery)]: priceQuery } }));
      await store.push('default', 'ios', [graphqlInput(productQuery)]);
      const manifest = parseManifest(await readFile(join(dir.path, 'default', 'manifest.json'), 'utf8'));
      expect(manifest.operations[sha256Hex(topProductsQuery)]).toBe(topProductsQuery);
    } finally {
      await dir.remove();
    }
  });
});
