/**
 * A partial hit whose subgraph answers the missing entities with a list of
 * the wrong length: the cached entities are served, and the error says so at
 * the first entity left unanswered (a path the client can place), counting
 * the representations actually sent.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { memoryCache } from './fixtures.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';
const headers = { 'cache-control': 'max-age=60' };
let broken = false;
let products: TestSubgraph;
let stock: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  products = await startSubgraph({
    name: 'products',
    typeDefs: `${LINK} type Query { products(first: Int!): [Product!]! } type Product @key(fields: "id") { id: ID! }`,
    resolvers: { Query: { products: (_: unknown, { first }: { first: number }) => ['p1', 'p2', 'p3', 'p4'].slice(0, first).map((id) => ({ id })) } },
    reply: () => ({ headers }),
  });
  stock = await startSubgraph({
    name: 'stock',
    typeDefs: `${LINK} type Product @key(fields: "id") { id: ID! stock: Int }`,
    resolvers: { Product: { stock: () => 5 } },
    reply: () => (broken ? { headers, body: '{"data":{"_entities":[{"stock":1}]}}' } : { headers }),
  });
  router = await startTestRouter({ subgraphs: [products, stock], plugins: [useCacheTags(), useResponseCache(memoryCache)] });
});

afterAll(async () => {
  await Promise.all([router?.close(), products?.close(), stock?.close()]);
});

it('serves the cached entities and reports the invalid answer at the first missing entity', async () => {
  await router.query('{ products(first: 2) { id stock } }');
  broken = true;
  const response = await router.query('{ products(first: 4) { id stock } }');
  expect(response.body.data).toEqual({
    products: [
      { id: 'p1', stock: 5 },
      { id: 'p2', stock: 5 },
      { id: 'p3', stock: null },
      { id: 'p4', stock: null },
    ],
  });
  expect(response.body.errors).toEqual([
    expect.objectContaining({
      message: 'Subgraph "stock" sent an invalid response: it returned 1 entities for 2 representations.',
      path: ['products', 2],
      extensions: expect.objectContaining({ code: 'SUBGRAPH_INVALID_RESPONSE' }),
    }),
  ]);
});
