/**
 * The response cache and `Authorization` (docs/response-cache.md, rule 4a,
 * after RFC 9111 §3.5): the answer to a subgraph request that carried
 * `Authorization` is stored only when it says `public`, `s-maxage` or
 * `must-revalidate`, so one user's answer is never served to another on
 * the strength of a bare `max-age`. Through real subgraphs whose answers
 * depend on the caller, and as a unit of the decision.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { carriesAuthorization, decideCaching } from '../../../plugins/response-cache/cache-control.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { memoryCache } from './fixtures.js';
import { usePerUserSubgraphs, type User } from './per-user-subgraphs.js';

/** Who a token belongs to. */
const USERS: Record<string, User> = {
  'Bearer token-alice': { name: 'Alice', rating: 5 },
  'Bearer token-bob': { name: 'Bob', rating: 1 },
};
const ALICE = { authorization: 'Bearer token-alice' };
const BOB = { authorization: 'Bearer token-bob' };

/** The user of the token a subgraph call carried (the test subgraph's context holds the request headers). */
const userOf = (context: unknown) => USERS[(context as { headers: Record<string, string> }).headers.authorization ?? ''];

/** A reply with this `Cache-Control`, or none. */
const withCacheControl = (value: string | undefined): { headers: Record<string, string> } => ({ headers: value === undefined ? {} : { 'cache-control': value } });

/** Each subgraph's `Cache-Control`, set per test. */
const cacheControl: { shop: string | undefined; ratings: string | undefined } = { shop: undefined, ratings: undefined };

let shop: TestSubgraph;
let ratings: TestSubgraph;
let router: TestRouter | undefined;

usePerUserSubgraphs(
  { userOf, reply: { shop: () => withCacheControl(cacheControl.shop), ratings: () => withCacheControl(cacheControl.ratings) } },
  (started) => ({ shop, ratings } = started),
);

afterEach(async () => {
  await router?.close();
  router = undefined;
});

/** A router with the memory cache that propagates the client's `Authorization` to every subgraph. */
async function startRouter(): Promise<TestRouter> {
  router = await startTestRouter({
    subgraphs: [shop, ratings],
    plugins: [useCacheTags(), useResponseCache(memoryCache)],
    config: { headers: { all: { request: [{ op: 'propagate', named: 'Authorization' }] } } },
  });
  return router;
}

describe('a root fetch sent with Authorization', () => {
  it("is not stored under a bare max-age: user B gets B's answer, not A's", async () => {
    cacheControl.shop = 'max-age=60';
    const cached = await startRouter();
    const alice = await cached.query({ query: '{ me { name } }', headers: ALICE });
    expect(alice.body).toEqual({ data: { me: { name: 'Alice' } } });
    expect(alice.headers.get('cache-control')).toBe('no-store');
    expect((await cached.query({ query: '{ me { name } }', headers: BOB })).body).toEqual({ data: { me: { name: 'Bob' } } });
    expect((await cached.query({ query: '{ me { name } }', headers: ALICE })).body).toEqual({ data: { me: { name: 'Alice' } } });
    expect(shop.calls).toHaveLength(3);
  });

  for (const header of ['public, max-age=60', 's-maxage=60', 'max-age=60, must-revalidate']) {
    it(`is stored when the answer says ${JSON.stringify(header)} (shared with every caller, as the subgraph declared)`, async () => {
      cacheControl.shop = header;
      const cached = await startRouter();
      const query = '{ product(upc: "p1") { name } }';
      for (const headers of [ALICE, BOB, ALICE]) {
        expect((await cached.query({ query, headers })).body).toEqual({ data: { product: { name: 'Product p1' } } });
      }
      expect(shop.calls).toHaveLength(1);
    });
  }

  it('is still stored under a bare max-age when the request carried no Authorization', async () => {
    cacheControl.shop = 'max-age=60';
    const cached = await startRouter();
    for (let i = 0; i < 2; i++) expect((await cached.query('{ product(upc: "p2") { name } }')).body).toEqual({ data: { product: { name: 'Product p2' } } });
    expect(shop.calls).toHaveLength(1);
  });
});

describe('an entity fetch sent with Authorization', () => {
  const query = '{ product(upc: "p3") { name myRating } }';

  it("is not stored under a bare max-age: user B gets B's rating, not A's", async () => {
    cacheControl.shop = 'public, max-age=60';
    cacheControl.ratings = 'max-age=60';
    const cached = await startRouter();
    expect((await cached.query({ query, headers: ALICE })).body).toEqual({ data: { product: { name: 'Product p3', myRating: 5 } } });
    expect((await cached.query({ query, headers: BOB })).body).toEqual({ data: { product: { name: 'Product p3', myRating: 1 } } });
    expect(ratings.calls).toHaveLength(2);
    // The public root answer was shared; the entity answer was not.
    expect(shop.calls).toHaveLength(1);
  });

  it('is stored when the answer says public', async () => {
    cacheControl.shop = 'public, max-age=60';
    cacheControl.ratings = 'public, max-age=60';
    const cached = await startRouter();
    const first = await cached.query({ query, headers: ALICE });
    expect(first.body).toEqual({ data: { product: { name: 'Product p3', myRating: 5 } } });
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    // Declared public: every caller gets the stored answer.
    expect((await cached.query({ query, headers: BOB })).body).toEqual({ data: { product: { name: 'Product p3', myRating: 5 } } });
    expect(ratings.calls).toHaveLength(1);
  });
});

describe('the decision (unit)', () => {
  const FALLBACK = 30_000;
  const rows: Array<[header: string, anonymous: boolean, authorized: boolean]> = [
    ['max-age=60', true, false],
    ['public, max-age=60', true, true],
    ['s-maxage=60', true, true],
    ['max-age=60, s-maxage=30', true, true],
    ['max-age=60, must-revalidate', true, true],
    ['must-revalidate', true, true],
    ['Public, Max-Age=60', true, true],
    ['proxy-revalidate, max-age=60', true, false],
    ['stale-while-revalidate=60', true, false],
    ['public, private, max-age=60', false, false],
    ['public, max-age=0', false, false],
    ['s-maxage=0, max-age=60', false, false],
    ['no-store, public, max-age=60', false, false],
  ];
  for (const [header, anonymous, authorized] of rows) {
    it(`${JSON.stringify(header)}: ${anonymous ? 'stored' : 'not stored'} without Authorization, ${authorized ? 'stored' : 'not stored'} with it`, () => {
      expect(decideCaching(header, false, FALLBACK).store).toBe(anonymous);
      expect(decideCaching(header, false, FALLBACK, true).store).toBe(authorized);
    });
  }

  it('keeps the lifetime the rules select for an authorized answer', () => {
    expect(decideCaching('max-age=60, s-maxage=30', false, FALLBACK, true)).toEqual({ store: true, ttlMs: 30_000, isPublic: false });
    expect(decideCaching('must-revalidate', false, FALLBACK, true)).toEqual({ store: true, ttlMs: FALLBACK, isPublic: false });
    expect(decideCaching('public, max-age=60', false, FALLBACK, true)).toEqual({ store: true, ttlMs: 60_000, isPublic: true });
  });

  it('says why it refused', () => {
    const policy = decideCaching('max-age=60', false, FALLBACK, true);
    expect(policy.store).toBe(false);
    expect(policy.store === false && policy.reason).toMatch(/Authorization/);
  });

  it('finds Authorization in any letter case, with any value', () => {
    expect(carriesAuthorization({ authorization: 'Bearer x' })).toBe(true);
    expect(carriesAuthorization({ Authorization: 'Bearer x' })).toBe(true);
    expect(carriesAuthorization({ AUTHORIZATION: '' })).toBe(true);
    expect(carriesAuthorization({ 'x-authorization': 'Bearer x', authorizations: 'x' })).toBe(false);
    expect(carriesAuthorization({})).toBe(false);
    expect(carriesAuthorization(undefined)).toBe(false);
    expect(carriesAuthorization(Object.create({ authorization: 'inherited' }) as Record<string, string>)).toBe(false);
  });
});
