/**
 * Several routers reading one store: how long a replica that looked an operation up keeps serving it once
 * it is deleted, and keeps refusing an id once it is pushed. Lookup mode keeps a found operation for
 * `lookup_cache.ttl` and a miss for one second; manifest mode serves each replica's last poll.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { openOperationsStore, sha256Hex, type OperationsStore } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput, tempDir } from '../../operations/support/operations.js';
import { startStaticHost } from '../../operations/support/static-server.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { byHash, prices, startProducts, topProducts, topProductsData } from './fixtures.js';

let products: TestSubgraph;
let redis: RedisServer;
/** Each Redis test reads its own database. */
let nextDatabase = 1;

beforeAll(async () => {
  products = await startProducts();
  redis = await startRedis();
});
afterAll(async () => {
  await products?.close();
  await redis?.stop();
});

type Options = NonNullable<Parameters<typeof usePersistedOperations>[0]>;
type Cleanup = (fn: () => Promise<void>) => void;

/** Two routers (replicas) with the same persisted-operations options. */
async function replicas(options: Options, config: Parameters<typeof startTestRouter>[0]['config'], onTestFinished: Cleanup): Promise<TestRouter[]> {
  const started: TestRouter[] = [];
  for (let i = 0; i < 2; i++) {
    const router = await startTestRouter({ subgraphs: [products], config, plugins: [usePersistedOperations({ enabled: true, ...options })] });
    onTestFinished(() => router.close());
    started.push(router);
  }
  return started;
}

/** What each replica answers for an id: `served` (the operation's data) or `not found`. */
async function answers(routers: readonly TestRouter[], hash: string): Promise<string[]> {
  return Promise.all(
    routers.map(async (router) => {
      const { body } = await router.query({ extensions: byHash(hash), headers: { 'graphql-client-name': 'web' } });
      if (body.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') return 'not found';
      if (body.data !== undefined) return 'served';
      throw new Error(`unexpected answer ${JSON.stringify(body)}`);
    }),
  );
}

/** A store to write to, and the storage option and core config routers read it with. */
interface Stores {
  readonly name: string;
  open(onTestFinished: Cleanup): Promise<{ store: OperationsStore; storage: Options['storage']; config?: Parameters<typeof startTestRouter>[0]['config'] }>;
}

const stores: Stores[] = [
  {
    name: 'a directory',
    async open(onTestFinished) {
      const dir = await tempDir();
      onTestFinished(() => dir.remove());
      const store = await openOperationsStore({ provider: 'file', path: dir.path });
      return { store, storage: { provider: 'file', path: dir.path } };
    },
  },
  {
    name: 'Redis',
    async open(onTestFinished) {
      const db = nextDatabase++;
      const url = `${redis.url}/${db}`;
      await redis.cli('-n', String(db), 'FLUSHDB');
      const store = await openOperationsStore({ provider: 'redis', urls: [url] });
      onTestFinished(() => store.close());
      return { store, storage: { provider: 'sharedstore', provider_id: 'main' }, config: { storage_providers: { sharedstore: [{ id: 'main', urls: [url] }] } } };
    },
  },
  {
    name: 'an HTTP host serving a directory store',
    async open(onTestFinished) {
      const dir = await tempDir();
      onTestFinished(() => dir.remove());
      const host = await startStaticHost(dir.path);
      onTestFinished(() => host.close());
      const store = await openOperationsStore({ provider: 'file', path: dir.path });
      return { store, storage: { provider: 'http', url: host.url } };
    },
  },
];

describe('replicas over one store, in lookup mode', { timeout: 30_000 }, () => {
  for (const kind of stores) {
    it(`stop serving a deleted operation once lookup_cache.ttl has passed: ${kind.name}`, async ({ onTestFinished }) => {
      const { store, storage, config } = await kind.open(onTestFinished);
      await store.push('default', 'web', [graphqlInput(topProducts)]);
      const routers = await replicas({ storage, lookup_cache: { ttl: '2s' } }, config, onTestFinished);
      const hash = sha256Hex(topProducts);
      expect(await answers(routers, hash)).toEqual(['served', 'served']);
      await store.delete('default', 'web', hash);
      const deleted = Date.now();
      // Each replica looked the operation up, and keeps it for the TTL...
      expect(await answers(routers, hash)).toEqual(['served', 'served']);
      // ...then looks again, and the deletion shows on every replica.
      await vi.waitFor(async () => expect(await answers(routers, hash)).toEqual(['not found', 'not found']), { timeout: 10_000, interval: 50 });
      expect(Date.now() - deleted).toBeLessThan(2_000 + 1_500);
    });
  }

  it('serve an id pushed after they missed it within a second, with the default lookup_cache', async ({ onTestFinished }) => {
    const { store, storage, config } = await stores[1]!.open(onTestFinished);
    const routers = await replicas({ storage }, config, onTestFinished);
    const hash = sha256Hex(prices);
    expect(await answers(routers, hash)).toEqual(['not found', 'not found']);
    await store.push('default', 'web', [graphqlInput(prices)]);
    const pushed = Date.now();
    await vi.waitFor(async () => expect(await answers(routers, hash)).toEqual(['served', 'served']), { timeout: 10_000, interval: 50 });
    expect(Date.now() - pushed).toBeLessThan(1_000 + 1_000);
  });
});

describe('replicas over one store, in manifest mode', { timeout: 30_000 }, () => {
  it('each stop serving a deleted operation at its next poll', async ({ onTestFinished }) => {
    const { store, storage, config } = await stores[1]!.open(onTestFinished);
    await store.push('default', 'web', [graphqlInput(topProducts)]);
    const routers = await replicas({ storage, manifest: { enabled: true, poll_interval: '200ms', poll_jitter: '100ms' } }, config, onTestFinished);
    const hash = sha256Hex(topProducts);
    const first = await routers[0]!.query({ extensions: byHash(hash) });
    expect(first.body).toEqual({ data: topProductsData });
    expect(await answers(routers, hash)).toEqual(['served', 'served']);
    await store.delete('default', 'web', hash);
    const deleted = Date.now();
    await vi.waitFor(async () => expect(await answers(routers, hash)).toEqual(['not found', 'not found']), { timeout: 10_000, interval: 25 });
    expect(Date.now() - deleted).toBeLessThan(300 + 1_000);
  });
});
