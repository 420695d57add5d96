import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useAutomaticPersistedQueries } from '../../../plugins/automatic-persisted-queries/index.js';
import { APQ_KEY_PREFIX } from '../../../plugins/automatic-persisted-queries/shared-store.js';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { openOperationsStore, sha256Hex } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput, tempDir } from '../../operations/support/operations.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { byHash, collectingLogger, prices, startProducts, topProducts, topProductsData } from '../persisted-operations/fixtures.js';

let products: TestSubgraph;
let redis: RedisServer;
const routers: TestRouter[] = [];

const NOT_FOUND_BODY = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };

beforeAll(async () => {
  [products, redis] = await Promise.all([startProducts(), startRedis()]);
});
afterAll(async () => {
  await Promise.all(routers.map((router) => router.close()));
  await Promise.all([products?.close(), redis?.stop()]);
});

async function replica(options: { ttl?: string; logger?: ReturnType<typeof collectingLogger>['logger'] } = {}): Promise<TestRouter> {
  const router = await startTestRouter({
    subgraphs: [products],
    config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
    plugins: [useAutomaticPersistedQueries({ enabled: true, cache: options.ttl ? { ttl: options.ttl } : {}, storage: { provider_id: 'main' } })],
    ...(options.logger ? { logger: options.logger } : {}),
  });
  routers.push(router);
  return router;
}

describe('automatic persisted queries shared in Redis', () => {
  it('runs by hash on one replica a query registered on another', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const hash = sha256Hex(topProducts);
    expect((await b.query({ extensions: byHash(hash) })).body).toEqual(NOT_FOUND_BODY);
    expect(await a.query({ query: topProducts, extensions: byHash(hash) })).toMatchObject({ status: 200, body: { data: topProductsData } });
    expect(await redis.cli('GET', `${APQ_KEY_PREFIX}${hash}`)).toBe(topProducts);
    // Without cache.ttl the key still expires, after a day: anonymous clients cannot fill Redis for good.
    const ttl = Number(await redis.cli('PTTL', `${APQ_KEY_PREFIX}${hash}`));
    expect(ttl).toBeGreaterThan(23 * 3600_000);
    expect(ttl).toBeLessThanOrEqual(24 * 3600_000);
    expect(await b.query({ extensions: byHash(hash) })).toMatchObject({ status: 200, body: { data: topProductsData } });
    // Now in b's own front cache too: it runs without Redis.
    await redis.cli('DEL', `${APQ_KEY_PREFIX}${hash}`);
    expect(await b.query({ extensions: byHash(hash) })).toMatchObject({ status: 200, body: { data: topProductsData } });
  });

  it('gives the Redis key the cache.ttl', async () => {
    const a = await replica({ ttl: '1m' });
    const hash = sha256Hex(prices);
    await a.query({ query: prices, extensions: byHash(hash) });
    // The write to Redis goes on after the answer: wait for the key (PTTL -2 = no key yet).
    let ttl = -2;
    await vi.waitFor(async () => {
      ttl = Number(await redis.cli('PTTL', `${APQ_KEY_PREFIX}${hash}`));
      expect(ttl).not.toBe(-2);
    });
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('still answers with the text while Redis is down, answers a hash-only request PersistedQueryNotFound, and warns once', async () => {
    const logs = collectingLogger();
    const [a, b] = await Promise.all([replica({ logger: logs.logger }), replica()]);
    await redis.kill();
    try {
      const query = 'query Names { topProducts { name } }';
      const hash = sha256Hex(query);
      for (let i = 0; i < 5; i++) {
        expect(await a.query({ query, extensions: byHash(hash) })).toMatchObject({ status: 200, body: { data: { topProducts: [{ name: 'Table' }, { name: 'Couch' }] } } });
        expect((await b.query({ extensions: byHash(hash) })).body).toEqual(NOT_FOUND_BODY);
      }
      const unknown = sha256Hex('query Other { topProducts { upc } }');
      for (let i = 0; i < 5; i++) expect((await a.query({ extensions: byHash(unknown) })).body).toEqual(NOT_FOUND_BODY);
      const warnings = logs.lines.filter((line) => line.level === 'warn' && line.msg.startsWith('APQ shared store unreachable'));
      expect(warnings).toHaveLength(1);
    } finally {
      await redis.restart();
    }
  });
});

describe('the persisted-operations safelist beside a shared APQ store', () => {
  let dir: { path: string; remove(): Promise<void> };

  beforeAll(async () => {
    dir = await tempDir();
    const store = await openOperationsStore({ provider: 'file', path: dir.path });
    await store.push('default', 'unknown', [graphqlInput(topProducts)]);
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it.each(['persisted operations first', 'APQ first'])('refuses an unregistered text another replica left in Redis, whatever the plugin order (%s)', async (order) => {
    const unregistered = 'query Unregistered { topProducts { upc price } }';
    const hash = sha256Hex(unregistered);
    await redis.cli('SET', `${APQ_KEY_PREFIX}${hash}`, unregistered);
    const persisted = usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path }, safelist: true });
    const apq = useAutomaticPersistedQueries({ enabled: true, storage: { provider_id: 'main' } });
    const router = await startTestRouter({
      subgraphs: [products],
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
      plugins: order === 'APQ first' ? [apq, persisted] : [persisted, apq],
    });
    routers.push(router);
    products.reset();
    for (let i = 0; i < 2; i++) {
      const response = await router.query({ extensions: byHash(hash) });
      expect(response.status).toBe(403);
      expect(response.body.errors?.[0]?.extensions?.code).toBe('QUERY_NOT_IN_SAFELIST');
    }
    expect(products.calls).toEqual([]);
    // A registered text found in Redis still runs by hash.
    await redis.cli('SET', `${APQ_KEY_PREFIX}${sha256Hex(topProducts)}`, topProducts);
    expect(await router.query({ extensions: byHash(sha256Hex(topProducts)) })).toMatchObject({ status: 200, body: { data: topProductsData } });
  });
});

describe('automatic_persisted_queries.storage.provider_id', () => {
  it('stops startup when it names no storage_providers.sharedstore entry', async () => {
    await expect(startTestRouter({ subgraphs: [products], plugins: [useAutomaticPersistedQueries({ enabled: true, storage: { provider_id: 'nope' } })] })).rejects.toThrow(
      /automatic_persisted_queries\.storage\.provider_id.*"nope" is not in storage_providers\.sharedstore/s,
    );
  });
});
