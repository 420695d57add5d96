/**
 * The client's Cache-Control when authorization shapes the answer: the
 * subgraphs say `public` (their answers do not depend on the caller), but
 * the router removes fields per caller, so the router's answer must not be
 * kept by a shared cache (a CDN keyed by URL would hand one caller's prices
 * to a caller without the scope). Only operations that touch protected
 * fields are affected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { memoryCache } from '../response-cache/fixtures.js';
import { bearer, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../authentication/jwks-fixtures.js';

let products: TestSubgraph;
let jwks: JwksServer;
let key: SigningKey;
let router: TestRouter;

beforeAll(async () => {
  products = await startSubgraph({
    name: 'products',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key", "@requiresScopes"])
      type Query {
        products: [Product!]!
      }
      type Product @key(fields: "upc") {
        upc: ID!
        name: String
        price: Int @requiresScopes(scopes: [["read:price"]])
      }
    `,
    resolvers: { Query: { products: () => [{ upc: '1', name: 'Table', price: 10 }] } },
    reply: () => ({ headers: { 'cache-control': 'public, max-age=60' } }),
  });
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
  router = await startTestRouter({
    subgraphs: [products],
    plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }), useAuthorization({}), useCacheTags(), useResponseCache(memoryCache)],
  });
});

afterAll(async () => {
  await Promise.all([router?.close(), products?.close(), jwks?.close()]);
});

describe('the Cache-Control of an answer authorization shapes', () => {
  it('is private when the operation selects a protected field, even for a caller who may see it', async () => {
    const allowed = await router.query({ query: '{ products { name price } }', method: 'GET', headers: bearer(await sign(key, { claims: { scope: 'read:price' } })) });
    expect(allowed.body).toEqual({ data: { products: [{ name: 'Table', price: 10 }] } });
    expect(allowed.headers.get('cache-control')).toBe('private, max-age=60');
    // The same URL for a caller without the scope: another answer (which a shared cache must not have been given the first).
    const refused = await router.query({ query: '{ products { name price } }', method: 'GET', headers: bearer(await sign(key)) });
    expect(refused.body.data).toEqual({ products: [{ name: 'Table', price: null }] });
    expect(refused.headers.get('cache-control')).toBe('no-store');
  });

  it('stays as the subgraphs said for an operation without protected fields', async () => {
    const response = await router.query({ query: '{ products { upc name } }', method: 'GET', headers: bearer(await sign(key)) });
    expect(response.body).toEqual({ data: { products: [{ upc: '1', name: 'Table' }] } });
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
  });
});
