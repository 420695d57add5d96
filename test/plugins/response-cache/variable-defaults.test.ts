/**
 * Operations that differ only by a variable's default value: the value an
 * entity field reads is the default when the client sends none, so the
 * router writes defaults into the variables it sends, and an entity entry
 * cached for one default is never served for another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { memoryCache } from './fixtures.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';
const cached = () => ({ headers: { 'cache-control': 'max-age=60' } });

let catalog: TestSubgraph;
let reviews: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  catalog = await startSubgraph({
    name: 'catalog',
    typeDefs: `${LINK} type Query { product(id: ID!): Product } type Product @key(fields: "id") { id: ID! }`,
    resolvers: { Query: { product: (_: unknown, { id }: { id: string }) => ({ id }) } },
    reply: cached,
  });
  reviews = await startSubgraph({
    name: 'reviews',
    typeDefs: `${LINK} type Product @key(fields: "id") { id: ID! score(scale: Int = 10): Int echo(id: ID): ID }`,
    resolvers: { Product: { score: (_: unknown, { scale }: { scale: number }) => 7 * scale, echo: (_: unknown, { id }: { id: string }) => id } },
    reply: cached,
  });
  router = await startTestRouter({ subgraphs: [catalog, reviews], plugins: [useCacheTags(), useResponseCache(memoryCache)] });
});

afterAll(async () => {
  await Promise.all([router?.close(), catalog?.close(), reviews?.close()]);
});

describe('variable defaults and entity entries', () => {
  it('answers each default with its own value, and sends the default as a variable', async () => {
    const two = await router.query('query ($s: Int = 2) { product(id: "1") { score(scale: $s) } }');
    expect(two.body).toEqual({ data: { product: { score: 14 } } });
    const three = await router.query('query ($s: Int = 3) { product(id: "1") { score(scale: $s) } }');
    expect(three.body).toEqual({ data: { product: { score: 21 } } });
    // No default: the field's own (10) applies, as the client sent no value.
    const none = await router.query('query ($s: Int) { product(id: "1") { score(scale: $s) } }');
    expect(none.body).toEqual({ data: { product: { score: 70 } } });
    expect(reviews.calls.map((call) => call.variables?.s)).toEqual([2, 3, undefined]);
    // The same default again is a hit; an explicit value equal to it shares the entry.
    await router.query('query ($s: Int = 3) { product(id: "1") { score(scale: $s) } }');
    const explicit = await router.query({ query: 'query ($s: Int = 9) { product(id: "1") { score(scale: $s) } }', variables: { s: 3 } });
    expect(explicit.body).toEqual({ data: { product: { score: 21 } } });
    expect(reviews.calls).toHaveLength(3);
  });

  it('leaves a default JSON cannot carry exactly to the subgraph (an ID written as a 20-digit number)', async () => {
    const response = await router.query('query ($i: ID = 12345678901234567890) { product(id: "1") { echo(id: $i) } }');
    expect(response.body).toEqual({ data: { product: { echo: '12345678901234567890' } } });
  });
});
