/**
 * Executable directives the supergraph defines beside the router's own (a
 * `directive @upper on FIELD` of a subgraph) are accepted in operations and
 * not forwarded: subgraphs are asked for the fields without them. Whether a
 * supergraph keeps such a directive when only some subgraphs define it
 * depends on the composition tool (this repository's keeps it), and the
 * supergraph does not say which subgraphs do, so sending it on could make a
 * subgraph refuse the whole fetch.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

let products: TestSubgraph;
let prices: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  products = await startSubgraph({
    name: 'products',
    typeDefs: `${LINK}
      directive @upper on FIELD
      type Query { product: Product }
      type Product @key(fields: "upc") { upc: ID! name: String! }`,
    resolvers: { Query: { product: () => ({ upc: 'p1', name: 'Table' }) }, Product: { __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc, name: 'Table' }) } } as never,
  });
  // Does not define @upper: a fetch carrying it would fail validation there.
  prices = await startSubgraph({
    name: 'prices',
    typeDefs: `${LINK} type Product @key(fields: "upc") { upc: ID! price: Int! }`,
    resolvers: { Product: { __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc, price: 3 }) } } as never,
  });
  router = await startTestRouter({ subgraphs: [products, prices], listen: true });
});

afterAll(async () => {
  await router?.close();
  await products?.close();
  await prices?.close();
});

async function post(query: string, variables?: Record<string, unknown>): Promise<unknown> {
  const response = await fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return response.json();
}

it('accepts a directive the supergraph defines and asks every subgraph without it', async () => {
  products.reset();
  prices.reset();
  expect(await post('{ product { name @upper price @upper } }')).toEqual({ data: { product: { name: 'Table', price: 3 } } });
  expect([...products.calls, ...prices.calls].map((call) => call.query).join('\n')).not.toMatch(/@upper/);
});

it('refuses a directive the supergraph does not define, as validation does', async () => {
  const answer = (await post('{ product { name @lower } }')) as { errors: Array<{ message: string; extensions: { code: string } }> };
  expect(answer.errors[0]).toMatchObject({ message: 'Unknown directive "@lower".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
});
