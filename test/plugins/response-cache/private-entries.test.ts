/**
 * `response_cache.private_entries`: an answer marked `private` is stored per
 * user (the user named by a request header, or by a claim of the token the
 * `authentication` plugin verified), never served to another user; shared
 * answers stay shared. Real redis-server, real subgraphs whose answers
 * depend on the caller, jose-signed tokens against a real JWKS server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { decideCaching } from '../../../plugins/response-cache/cache-control.js';
import { responseCacheOptionsSchema, useResponseCache, type ResponseCacheOptions } from '../../../plugins/response-cache/index.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { capturingLogger, SHARED_KEY } from './fixtures.js';
import { LINK, usePerUserSubgraphs, type User } from './per-user-subgraphs.js';
import { bearer, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../authentication/jwks-fixtures.js';

/** Per user: the name `me` answers and the rating `myRating` answers. */
const USERS: Record<string, User> = {
  alice: { name: 'Alice', rating: 5 },
  bob: { name: 'Bob', rating: 1 },
};

/** The user a subgraph call is for: the `x-user-id` header the router sent. */
const userOf = (context: unknown) => USERS[(context as { headers: Record<string, string> }).headers['x-user-id'] ?? ''];

/** `me` and `myRating` are per user (`private`); `product` is the same for everyone (`public`). */
const QUERY = '{ me { name } product(upc: "p1") { name myRating } }';

let redis: RedisServer;
let shop: TestSubgraph;
let ratings: TestSubgraph;
let jwks: JwksServer;
let key: SigningKey;
let router: TestRouter | undefined;

// The root answer holds `me`, the entity answer `myRating`: both private. (One operation, one root fetch.)
const privateReply = () => ({ headers: { 'cache-control': 'private, max-age=60' } });
usePerUserSubgraphs({ userOf, reply: { shop: privateReply, ratings: privateReply } }, (started) => ({ shop, ratings } = started));

beforeAll(async () => {
  redis = await startRedis();
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
});

beforeEach(async () => {
  await redis.cli('FLUSHALL');
});

afterEach(async () => {
  await router?.close();
  router = undefined;
});

afterAll(async () => {
  await Promise.all([jwks?.close(), redis?.stop()]);
});

const redisCache = (extra: Partial<ResponseCacheOptions>): ResponseCacheOptions => ({
  enabled: true,
  storage: { provider: 'sharedstore', provider_id: 'main' },
  debug: { enabled: true },
  ...extra,
});

/** A router over Redis that sends the client's `X-User-Id` to the subgraphs. */
async function headerRouter(cache: ResponseCacheOptions): Promise<TestRouter> {
  router = await startTestRouter({
    subgraphs: [shop, ratings],
    plugins: [useCacheTags(), useResponseCache(cache)],
    config: {
      storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] },
      headers: { all: { request: [{ op: 'propagate', named: 'X-User-Id' }] } },
    },
  });
  return router;
}

interface Answer {
  readonly me: string | undefined;
  readonly rating: number | null | undefined;
  readonly statuses: string[] | undefined;
  readonly cacheControl: string | null;
}

async function ask(target: TestRouter, headers: Record<string, string>): Promise<Answer> {
  const response = await target.query({ query: QUERY, headers: { 'x-switchyard-cache-debug': 'true', ...headers } });
  const body = response.body as {
    data?: { me: { name: string } | null; product: { myRating: number | null } };
    extensions?: { responseCache?: Array<{ status: string }> };
  };
  return {
    me: body.data?.me?.name,
    rating: body.data?.product.myRating,
    statuses: body.extensions?.responseCache?.map((item) => item.status),
    cacheControl: response.headers.get('cache-control'),
  };
}

/** Keys in Redis of entries (not the invalidation indexes and epochs). */
async function entryKeys(): Promise<string[]> {
  const keys = (await redis.cli('KEYS', 'router_response_cache:v1:*')).split('\n').filter((line) => line !== '');
  return keys.filter((name) => /:v1:(root|entity):/.test(name)).sort();
}

describe('private entries keyed by a request header', () => {
  it("store each user's private answers for that user alone, in Redis", async () => {
    const target = await headerRouter(redisCache({ private_entries: { enabled: true, user_header: 'X-User-Id' } }));
    expect(await ask(target, { 'x-user-id': 'alice' })).toMatchObject({ me: 'Alice', rating: 5, statuses: ['miss', 'miss'] });
    // Bob never gets Alice's entries: he misses, and is answered with his own data.
    expect(await ask(target, { 'x-user-id': 'bob' })).toMatchObject({ me: 'Bob', rating: 1, statuses: ['miss', 'miss'] });
    // Each one's repeat is a hit on their own entry.
    expect(await ask(target, { 'x-user-id': 'alice' })).toMatchObject({ me: 'Alice', rating: 5, statuses: ['hit', 'hit'] });
    expect(await ask(target, { 'x-user-id': 'bob' })).toMatchObject({ me: 'Bob', rating: 1, statuses: ['hit', 'hit'] });
    expect(shop.calls).toHaveLength(2);
    expect(ratings.calls).toHaveLength(2);
    // Every entry is a user's copy (no shared key holds a private answer), and no user id is in a key.
    const keys = await entryKeys();
    expect(keys).toHaveLength(4);
    for (const name of keys) expect(name).toMatch(/\|user:[\w-]{22}$/);
    expect(keys.join(' ')).not.toMatch(/alice|bob/);
    // A private answer is never offered to shared caches downstream.
    expect((await ask(target, { 'x-user-id': 'alice' })).cacheControl).toBe('no-store');
  });

  it('leave a request without the header uncached, and never serve it a user’s entry', async () => {
    const target = await headerRouter(redisCache({ private_entries: { enabled: true, user_header: 'x-user-id' } }));
    await ask(target, { 'x-user-id': 'alice' });
    // Anonymous: no user, so private answers are neither read nor stored.
    expect(await ask(target, {})).toMatchObject({ me: undefined, rating: null, statuses: ['miss', 'miss'] });
    expect(await ask(target, {})).toMatchObject({ me: undefined, rating: null, statuses: ['miss', 'miss'] });
    // An empty header names no one either.
    expect(await ask(target, { 'x-user-id': '' })).toMatchObject({ me: undefined, rating: null, statuses: ['miss', 'miss'] });
    expect(await entryKeys()).toHaveLength(2);
  });

  it('keep shared answers shared: a public root entry written for one user serves every user', async () => {
    const catalog = await startSubgraph({
      name: 'catalog',
      typeDefs: `${LINK}
        type Query { product(upc: ID!): Product }
        type Product @key(fields: "upc") { upc: ID! name: String }`,
      resolvers: { Query: { product: (_: unknown, args: { upc: string }) => ({ upc: args.upc, name: `Product ${args.upc}` }) } },
      reply: () => ({ headers: { 'cache-control': 'public, max-age=60' } }),
    });
    try {
      router = await startTestRouter({
        subgraphs: [catalog, ratings],
        plugins: [useCacheTags(), useResponseCache(redisCache({ private_entries: { enabled: true, user_header: 'x-user-id' } }))],
        config: {
          storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] },
          headers: { all: { request: [{ op: 'propagate', named: 'X-User-Id' }] } },
        },
      });
      const target = router;
      const product = async (user: string) => {
        const response = await target.query({ query: '{ product(upc: "p1") { name myRating } }', headers: { 'x-user-id': user, 'x-switchyard-cache-debug': 'true' } });
        const body = response.body as { data: { product: { name: string; myRating: number } }; extensions: { responseCache: Array<{ status: string }> } };
        return { ...body.data.product, statuses: body.extensions.responseCache.map((item) => item.status) };
      };
      expect(await product('alice')).toEqual({ name: 'Product p1', myRating: 5, statuses: ['miss', 'miss'] });
      // Bob hits the shared root entry; his rating is his own.
      expect(await product('bob')).toEqual({ name: 'Product p1', myRating: 1, statuses: ['hit', 'miss'] });
      expect(await product('bob')).toEqual({ name: 'Product p1', myRating: 1, statuses: ['hit', 'hit'] });
      expect(catalog.calls).toHaveLength(1);
      const keys = await entryKeys();
      expect(keys.filter((name) => !name.includes('|user:'))).toHaveLength(1);
    } finally {
      await router?.close();
      router = undefined;
      await catalog.close();
    }
  });

  it('are off by default: private answers are not stored', async () => {
    const target = await headerRouter(redisCache({}));
    await ask(target, { 'x-user-id': 'alice' });
    expect(await ask(target, { 'x-user-id': 'alice' })).toMatchObject({ me: 'Alice', statuses: ['miss', 'miss'] });
    expect(await entryKeys()).toEqual([]);
  });

  it('are cleared by invalidation like shared entries', async () => {
    const { logger, lines } = capturingLogger('info');
    router = await startTestRouter({
      subgraphs: [shop, ratings],
      plugins: [
        useCacheTags(),
        useResponseCache(
          redisCache({
            private_entries: { enabled: true, user_header: 'x-user-id' },
            invalidation: { endpoint: { enabled: true, listen_addr: '127.0.0.1:0', shared_key: SHARED_KEY } },
          }),
        ),
      ],
      config: {
        storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] },
        headers: { all: { request: [{ op: 'propagate', named: 'X-User-Id' }] } },
      },
      logger,
    });
    const listening = lines.find((line) => line.msg === 'Invalidation endpoint listening');
    const endpoint = `http://${String(listening?.listen_addr)}${String(listening?.path)}`;
    await ask(router, { 'x-user-id': 'alice' });
    await ask(router, { 'x-user-id': 'bob' });
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: SHARED_KEY, 'content-type': 'application/json' },
      body: JSON.stringify([{ kind: 'type', subgraph: 'ratings', type: 'Product' }]),
    });
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 202, body: { count: 2 } });
    expect(await ask(router, { 'x-user-id': 'alice' })).toMatchObject({ rating: 5, statuses: ['hit', 'miss'] });
  });
});

describe('private entries keyed by a token claim', () => {
  it('store per `sub`: users never see each other’s entries, whatever header they send', async () => {
    router = await startTestRouter({
      subgraphs: [shop, ratings],
      plugins: [
        useAuthentication({ jwt: { jwks: [{ url: jwks.url }] }, forward_claims: { sub: 'x-user-id' } }),
        useCacheTags(),
        useResponseCache(redisCache({ private_entries: { enabled: true, user_claim: 'sub' } })),
      ],
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
    });
    const alice = bearer(await sign(key, { claims: { sub: 'alice' } }));
    const bob = bearer(await sign(key, { claims: { sub: 'bob' } }));
    expect(await ask(router, alice)).toMatchObject({ me: 'Alice', rating: 5, statuses: ['miss', 'miss'] });
    // Bob claiming Alice's id in a header changes nothing: the claim decides.
    expect(await ask(router, { ...bob, 'x-user-id': 'alice' })).toMatchObject({ me: 'Bob', rating: 1, statuses: ['miss', 'miss'] });
    expect(await ask(router, alice)).toMatchObject({ me: 'Alice', rating: 5, statuses: ['hit', 'hit'] });
    // A new token for the same subject is the same user.
    const aliceAgain = bearer(await sign(key, { claims: { sub: 'alice', extra: 1 } }));
    expect(await ask(router, aliceAgain)).toMatchObject({ me: 'Alice', statuses: ['hit', 'hit'] });
    // No token: no user, nothing private read.
    expect(await ask(router, {})).toMatchObject({ me: undefined, statuses: ['miss', 'miss'] });
  });
});

describe('private_entries settings', () => {
  it('need exactly one of user_header and user_claim, and a header name', () => {
    const base = { enabled: true, storage: { provider: 'memory' } } as const;
    expect(responseCacheOptionsSchema.safeParse({ ...base, private_entries: { enabled: true } }).error?.issues[0]).toMatchObject({
      path: ['private_entries'],
      message: expect.stringMatching(/exactly one of user_header and user_claim/),
    });
    expect(responseCacheOptionsSchema.safeParse({ ...base, private_entries: { enabled: true, user_header: 'x-user', user_claim: 'sub' } }).success).toBe(false);
    expect(responseCacheOptionsSchema.safeParse({ ...base, private_entries: { enabled: true, user_header: 'x user' } }).error?.issues[0]).toMatchObject({
      path: ['private_entries', 'user_header'],
      message: 'must be an HTTP header name',
    });
    expect(responseCacheOptionsSchema.safeParse({ ...base, private_entries: { enabled: true, user_claim: '' } }).success).toBe(false);
    expect(responseCacheOptionsSchema.parse({ ...base, private_entries: { enabled: true, user_header: 'X-User-Id' } }).private_entries.user_header).toBe('x-user-id');
  });

  it('read private answers as a private cache does', () => {
    expect(decideCaching('private, max-age=30', false, 5000)).toMatchObject({ store: false, reason: 'private' });
    expect(decideCaching('private, max-age=30', false, 5000, true, true)).toEqual({ store: true, ttlMs: 30_000, isPublic: false, isPrivate: true });
    // s-maxage is for shared caches; without max-age the fallback applies.
    expect(decideCaching('private, s-maxage=30', false, 5000, false, true)).toEqual({ store: true, ttlMs: 5000, isPublic: false, isPrivate: true });
    expect(decideCaching('private, max-age=0', false, 5000, false, true)).toMatchObject({ store: false });
    expect(decideCaching('private, no-store', false, 5000, false, true)).toMatchObject({ store: false, reason: 'no-store' });
    expect(decideCaching('private, max-age=30', true, 5000, false, true)).toMatchObject({ store: false });
  });
});
