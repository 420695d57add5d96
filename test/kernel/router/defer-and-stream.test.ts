/**
 * `@defer` and `@stream` (sent by clients built for incremental delivery)
 * are accepted and answered whole, at once: the fragment's fields and the
 * whole list are in the one result, the subgraphs are asked without the
 * directives, and introspection lists both directives.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';

const SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  type Query { product: Product products: [Product!]! }
  type Product @key(fields: "upc") { upc: ID! name: String! }
`;
const PRODUCTS = [
  { upc: 'p1', name: 'Table' },
  { upc: 'p2', name: 'Chair' },
];

let subgraph: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  subgraph = await startSubgraph({ name: 'products', typeDefs: SDL, resolvers: { Query: { product: () => PRODUCTS[0], products: () => PRODUCTS } } as never });
  router = await startTestRouter({ subgraphs: [subgraph], listen: true });
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
});

const QUERY = '{ product { upc ... @defer(label: "details") { name } } products @stream(initialCount: 1) { upc } }';
const WHOLE = { data: { product: { upc: 'p1', name: 'Table' }, products: [{ upc: 'p1' }, { upc: 'p2' }] } };

async function post(accept: string, query: string, variables?: Record<string, unknown>): Promise<Response> {
  return fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ query, variables }) });
}

it('answers an operation with @defer and @stream whole, in one JSON result', async () => {
  subgraph.reset();
  const response = await post('multipart/mixed;deferSpec=20220824, application/json', QUERY);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await response.json()).toEqual(WHOLE);
  expect(subgraph.calls.map((call) => call.query).join('\n')).not.toMatch(/@defer|@stream/);
});

it('answers in one multipart part to a client that accepts only multipart/mixed', async () => {
  const response = await post('multipart/mixed;deferSpec=20220824', QUERY);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
  const text = await response.text();
  const parts = text.split(/\r\n---\r\n|\r\n-----\r\n$/).filter((part) => part.includes('{'));
  expect(parts).toHaveLength(1);
  expect(JSON.parse(parts[0]!.slice(parts[0]!.indexOf('\r\n\r\n') + 4))).toEqual(WHOLE);
});

it('honours @defer(if:) and @skip beside it, and still validates the directives', async () => {
  const conditional = await post('application/json', 'query ($d: Boolean!) { product { upc ... @defer(if: $d) @skip(if: true) { name } } }', { d: false });
  expect(await conditional.json()).toEqual({ data: { product: { upc: 'p1' } } });
  // @defer belongs on fragments, @stream on fields: elsewhere they are validation errors.
  const misplaced = await post('application/graphql-response+json', '{ product @defer { upc } }');
  expect(misplaced.status).toBe(400);
  expect((await misplaced.json()).errors[0]).toMatchObject({ message: 'Directive "@defer" may not be used on FIELD.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  const badArgument = await post('application/graphql-response+json', '{ products @stream(initialCount: "one") { upc } }');
  expect(badArgument.status).toBe(400);
});

it('lists @defer and @stream in introspection', async () => {
  const response = await post('application/json', '{ __schema { directives { name locations args { name } } } }');
  const directives = (await response.json()).data.__schema.directives as Array<{ name: string; locations: string[]; args: Array<{ name: string }> }>;
  expect(directives.find((d) => d.name === 'defer')).toEqual({ name: 'defer', locations: ['FRAGMENT_SPREAD', 'INLINE_FRAGMENT'], args: [{ name: 'if' }, { name: 'label' }] });
  expect(directives.find((d) => d.name === 'stream')).toEqual({ name: 'stream', locations: ['FIELD'], args: [{ name: 'if' }, { name: 'label' }, { name: 'initialCount' }] });
});
