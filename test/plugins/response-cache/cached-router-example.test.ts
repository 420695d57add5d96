/**
 * The walkthrough of examples/cached-router/README.md, step by step, against
 * the example itself (its config file, its subgraphs) and a real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCachedRouter, type CachedRouter } from '../../../examples/cached-router/start.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { freePort } from './fixtures.js';

const SHARED_KEY = 'example-shared-key-change-me-0123456789';

let redis: RedisServer;
let example: CachedRouter;
let invalidationUrl: string;

beforeAll(async () => {
  redis = await startRedis();
  const [routerPort, invalidationPort] = [await freePort(), await freePort()];
  invalidationUrl = `http://127.0.0.1:${invalidationPort}/invalidation`;
  example = await startCachedRouter({
    redisUrl: redis.url,
    env: { LISTEN_ADDR: `127.0.0.1:${routerPort}`, RESPONSE_CACHE_INVALIDATION_ENDPOINT_LISTEN_ADDR: `127.0.0.1:${invalidationPort}` },
  });
});

afterAll(async () => {
  await example?.close();
  await redis?.stop();
});

/** `curl $URL -H 'content-type: application/json' -H 'x-switchyard-cache-debug: true' -d '{"query": ...}'` */
async function graphql(query: string) {
  const response = await fetch(example.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-switchyard-cache-debug': 'true' },
    body: JSON.stringify({ query }),
  });
  return { cacheControl: response.headers.get('cache-control'), body: (await response.json()) as Record<string, unknown> };
}

/** `curl -X POST $INVALIDATION -H "Authorization: $KEY" -H 'Content-Type: application/json' -d '[...]'` */
async function invalidate(elements: unknown, authorization = SHARED_KEY) {
  const response = await fetch(invalidationUrl, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(elements),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

const STOCK = '{ products { upc name quantity } }';

function stock(p1Quantity: number) {
  return {
    products: [
      { upc: 'p1', name: 'Table', quantity: p1Quantity },
      { upc: 'p2', name: 'Couch', quantity: 0 },
      { upc: 'p3', name: 'Chair', quantity: 4 },
    ],
  };
}

describe('the cached-router example walkthrough', () => {
  it('1. a first query misses, the second is answered from Redis', async () => {
    expect(await graphql(STOCK)).toEqual({
      cacheControl: 'public, max-age=30',
      body: {
        data: stock(10),
        extensions: {
          responseCache: [
            { subgraph: 'catalog', kind: 'root', status: 'miss' },
            { subgraph: 'inventory', kind: 'entity', status: 'miss' },
          ],
        },
      },
    });
    const second = await graphql(STOCK);
    expect(second.body.extensions).toEqual({
      responseCache: [
        { subgraph: 'catalog', kind: 'root', status: 'hit' },
        { subgraph: 'inventory', kind: 'entity', status: 'hit' },
      ],
    });
    expect(example.subgraphs.map((s) => s.calls.length)).toEqual([1, 1]);
  });

  it('2. a mutation changes the stock; the cache still answers the old value', async () => {
    expect((await graphql('mutation { restock(upc: "p1", quantity: 25) { upc quantity } }')).body).toEqual({
      data: { restock: { upc: 'p1', quantity: 25 } },
      extensions: { responseCache: [{ subgraph: 'inventory', kind: 'root', status: 'skip' }] },
    });
    expect((await graphql(STOCK)).body.data).toEqual(stock(10));
  });

  it('3. invalidating the tag product:p1 removes that one entity; the next query fetches only it', async () => {
    expect(await invalidate([{ kind: 'cache_tag', subgraphs: ['inventory'], cache_tag: 'product:p1' }])).toEqual({ status: 202, body: { count: 1 } });
    const inventory = example.subgraphs[1]!;
    inventory.reset();
    expect(await graphql(STOCK)).toEqual({
      // The cached entities have a little less than their 30s left.
      cacheControl: expect.stringMatching(/^public, max-age=(29|30)$/),
      body: {
        data: stock(25),
        extensions: {
          responseCache: [
            { subgraph: 'catalog', kind: 'root', status: 'hit' },
            { subgraph: 'inventory', kind: 'entity', status: 'partial_hit' },
          ],
        },
      },
    });
    expect(inventory.calls.map((call) => call.variables.representations)).toEqual([[{ __typename: 'Product', upc: 'p1' }]]);
  });

  it('4. invalidating by type and by subgraph, and what a mistake looks like', async () => {
    expect(await invalidate([{ kind: 'type', subgraph: 'inventory', type: 'Product' }])).toEqual({ status: 202, body: { count: 3 } });
    expect(await invalidate([{ kind: 'subgraph', subgraph: 'catalog' }])).toEqual({ status: 202, body: { count: 1 } });
    expect(await invalidate([{ kind: 'type', subgraph: 'inventory' }])).toEqual({
      status: 400,
      body: { errors: [{ index: 0, kind: 'type', message: '"type" is required for kind type: a __typename' }] },
    });
    expect(await invalidate([], 'Bearer example')).toEqual({ status: 401, body: { errors: [{ message: 'Invalid authorization header' }] } });
  });

  it('5. the keys in Redis carry the key prefix', async () => {
    await graphql(STOCK);
    const keys = (await redis.cli('--scan', '--pattern', 'router_response_cache:v1:*')).split('\n');
    expect(keys.filter((key) => key.startsWith('router_response_cache:v1:entity:inventory:Product:'))).toHaveLength(3);
    expect(keys.filter((key) => key.startsWith('router_response_cache:v1:root:catalog:'))).toHaveLength(1);
  });
});
