import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useAutomaticPersistedQueries } from '../../../plugins/automatic-persisted-queries/index.js';
import { APQ_KEY_PREFIX } from '../../../plugins/automatic-persisted-queries/shared-store.js';
import { sha256Hex } from '../../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
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
    expect(await redis.cli('PTTL', `${APQ_KEY_PREFIX}${hash}`)).toBe('-1');
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

describe('automatic_persisted_queries.storage.provider_id', () => {
  it('stops startup when it names no storage_providers.sharedstore entry', async () => {
    await expect(startTestRouter({ subgraphs: [products], plugins: [useAutomaticPersistedQueries({ enabled: true, storage: { provider_id: 'nope' } })] })).rejects.toThrow(
      /automatic_persisted_queries\.storage\.provider_id.*"nope" is not in storage_providers\.sharedstore/s,
    );
  });
});
