/**
 * Executable directives the subgraphs define (`directive @upper on FIELD`
 * in every subgraph, so composition keeps it) go to the subgraph with the
 * field they are on, with the variables their arguments read; the router's
 * own (`@skip`, `@include`, `@defer`, `@stream`) never do. A key field the
 * client asks for with such a directive is not the key the router sends on.
 */
import type { GraphQLResolveInfo } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';

const DIRECTIVES = /* GraphQL */ `
  directive @upper on FIELD
  directive @prefix(with: String!) on FIELD
`;
const PRODUCTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  ${DIRECTIVES}
  type Query { product: Product products: [Product!]! things: [Thing!]! }
  interface Thing { upc: ID! name: String! }
  type Product implements Thing @key(fields: "upc") { upc: ID! name: String! }
  type Gadget implements Thing { upc: ID! name: String! }
`;
const REVIEWS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  ${DIRECTIVES}
  type Product @key(fields: "upc") { upc: ID! reviews: [Review!]! }
  type Review { body: String! }
`;
const PRODUCTS = [
  { upc: 'p1', name: 'Table' },
  { upc: 'p2', name: 'Chair' },
];

/** What a subgraph implementing the two directives answers for a string field. */
function directed(value: string, info: GraphQLResolveInfo): string {
  let result = value;
  for (const node of info.fieldNodes) {
    for (const directive of node.directives ?? []) {
      if (directive.name.value === 'upper') result = result.toUpperCase();
      if (directive.name.value === 'prefix') {
        const argument = directive.arguments?.find((a) => a.name.value === 'with')?.value;
        const prefix = argument?.kind === 'Variable' ? (info.variableValues[argument.name.value] as string) : argument?.kind === 'StringValue' ? argument.value : '?';
        result = `${prefix}${result}`;
      }
    }
  }
  return result;
}

let products: TestSubgraph;
let reviews: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  products = await startSubgraph({
    name: 'products',
    typeDefs: PRODUCTS_SDL,
    resolvers: {
      Query: {
        product: () => PRODUCTS[0],
        products: () => PRODUCTS,
        things: () => [
          { ...PRODUCTS[0], __typename: 'Product' },
          { upc: 'g1', name: 'Lamp', __typename: 'Gadget' },
        ],
      },
      Thing: { __resolveType: (thing: { __typename: string }) => thing.__typename },
      Gadget: { name: (g: { name: string }, _: unknown, __: unknown, info: GraphQLResolveInfo) => directed(g.name, info) },
      Product: {
        __resolveReference: (ref: { upc: string }) => PRODUCTS.find((p) => p.upc === ref.upc),
        upc: (p: { upc: string }, _: unknown, __: unknown, info: GraphQLResolveInfo) => directed(p.upc, info),
        name: (p: { name: string }, _: unknown, __: unknown, info: GraphQLResolveInfo) => directed(p.name, info),
      },
    } as never,
  });
  reviews = await startSubgraph({
    name: 'reviews',
    typeDefs: REVIEWS_SDL,
    resolvers: {
      Product: {
        // Answers only for keys it knows: a transformed key would find no reviews.
        __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc, reviews: ref.upc === 'p1' ? [{ body: 'sturdy' }] : [] }),
      },
      Review: { body: (r: { body: string }, _: unknown, __: unknown, info: GraphQLResolveInfo) => directed(r.body, info) },
    } as never,
  });
  router = await startTestRouter({ subgraphs: [products, reviews], listen: true });
});

afterAll(async () => {
  await router?.close();
  await products?.close();
  await reviews?.close();
});

async function post(query: string, variables?: Record<string, unknown>): Promise<unknown> {
  const response = await fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return response.json();
}

function queries(subgraph: TestSubgraph): string {
  return subgraph.calls.map((call) => call.query).join('\n');
}

it('sends a field directive to the subgraph of the field, root and entity fetches alike', async () => {
  products.reset();
  reviews.reset();
  expect(await post('{ product { name @upper reviews { body @upper } } }')).toEqual({ data: { product: { name: 'TABLE', reviews: [{ body: 'STURDY' }] } } });
  expect(queries(products)).toMatch(/name @upper/);
  expect(queries(reviews)).toMatch(/body @upper/);
});

it('declares and sends the variables a directive argument reads', async () => {
  products.reset();
  const answer = await post('query ($p: String!) { products { name @prefix(with: $p) } }', { p: '> ' });
  expect(answer).toEqual({ data: { products: [{ name: '> Table' }, { name: '> Chair' }] } });
  expect(products.calls[0]!.query).toMatch(/\$p: String!/);
  expect(products.calls[0]!.variables).toEqual({ p: '> ' });
});

it('gives the client a key field with its directive and sends the other subgraph the key as it is', async () => {
  reviews.reset();
  expect(await post('{ product { upc @upper reviews { body } } }')).toEqual({ data: { product: { upc: 'P1', reviews: [{ body: 'sturdy' }] } } });
  expect(reviews.calls[0]!.variables).toMatchObject({ representations: [{ __typename: 'Product', upc: 'p1' }] });
});

it('keeps the directives of every occurrence of a field the client wrote twice', async () => {
  expect(await post('{ product { name name @upper } }')).toEqual({ data: { product: { name: 'TABLE' } } });
  expect(await post('{ product { ... on Product { name @prefix(with: "#") } name @upper } }')).toEqual({ data: { product: { name: '#TABLE' } } });
});

it('does not send the router its own directives, beside a forwarded one', async () => {
  products.reset();
  expect(await post('query ($s: Boolean!) { product { name @upper @skip(if: $s) upc @include(if: true) } }', { s: false })).toEqual({
    data: { product: { name: 'TABLE', upc: 'p1' } },
  });
  expect(queries(products)).not.toMatch(/@skip|@include|\$s/);
});

it('sends a field selected on an interface and again with a directive in a fragment as the client wrote it, one field', async () => {
  products.reset();
  expect(await post('{ things { name ... on Product { name @upper } } }')).toEqual({ data: { things: [{ name: 'TABLE' }, { name: 'Lamp' }] } });
  expect(queries(products)).toMatch(/name \.\.\. on Product \{ name @upper \}/);
  expect(await post('{ things { ... on Product { name @upper } name } }')).toEqual({ data: { things: [{ name: 'TABLE' }, { name: 'Lamp' }] } });
});

it('sends the other subgraph the key as it is when a fragment asks for the key with a directive', async () => {
  reviews.reset();
  expect(await post('{ things { upc ... on Product { upc @upper reviews { body } } } }')).toEqual({
    data: { things: [{ upc: 'P1', reviews: [{ body: 'sturdy' }] }, { upc: 'g1' }] },
  });
  expect(reviews.calls[0]!.variables).toMatchObject({ representations: [{ __typename: 'Product', upc: 'p1' }] });
});
