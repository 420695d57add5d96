/**
 * `@skip(if:)` / `@include(if:)` fed by a nullable variable with a default:
 * validation allows it, the client may still send an explicit `null`, and
 * the argument is `Boolean!`. The router answers a clear 400 (graphql-js
 * raises an error too) instead of guessing whether to keep the field.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';

const SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  type Query { product: Product echo(b: Boolean): String }
  type Product @key(fields: "upc") { upc: ID! name: String! }
`;

let subgraph: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'products',
    typeDefs: SDL,
    resolvers: { Query: { product: () => ({ upc: 'p1', name: 'Table' }), echo: (_: unknown, { b }: { b: boolean | null }) => JSON.stringify(b) } } as never,
  });
  router = await startTestRouter({ subgraphs: [subgraph] });
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
});

it('refuses an explicit null for a variable that @include or @skip reads, before any subgraph is asked', async () => {
  subgraph.reset();
  for (const query of ['query ($i: Boolean = true) { product { upc name @include(if: $i) } }', 'query ($s: Boolean = false) { product { upc name @skip(if: $s) } }']) {
    const response = await router.query({ query, variables: { i: null, s: null } });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(response.body.errors?.[0]?.message).toMatch(/^Variable "\$[is]" is null, but it is the "if" of @skip or @include/);
  }
  expect(subgraph.calls).toHaveLength(0);
  // The default (variable absent) and explicit values still work.
  expect((await router.query({ query: 'query ($i: Boolean = true) { product { name @include(if: $i) } }' })).body).toEqual({ data: { product: { name: 'Table' } } });
  expect((await router.query({ query: 'query ($i: Boolean = true) { product { upc name @include(if: $i) } }', variables: { i: false } })).body).toEqual({
    data: { product: { upc: 'p1' } },
  });
});

it("keeps a null for a variable of the same name that only another operation's @skip/@include reads", async () => {
  // B's $s feeds no condition; A's (and the fragment only A spreads) are not run.
  for (const query of [
    'query A($s: Boolean!) { product { upc @include(if: $s) } } query B($s: Boolean) { product { name } echo(b: $s) }',
    'query A($s: Boolean!) { product { ...F } } query B($s: Boolean) { product { name } echo(b: $s) } fragment F on Product { upc @skip(if: $s) }',
  ]) {
    const response = await router.query({ query, operationName: 'B', variables: { s: null } });
    expect(response.status, `${query} ${JSON.stringify(response.body)}`).toBe(200);
    expect(response.body).toEqual({ data: { product: { name: 'Table' }, echo: 'null' } });
  }
  // The fragment the selected operation spreads still counts.
  const spread = await router.query({
    query: 'query B($s: Boolean = true) { product { ...F } } fragment F on Product { name @include(if: $s) }',
    variables: { s: null },
  });
  expect(spread.status).toBe(400);
  expect(spread.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
});
