/**
 * One field selected twice on the same objects (`rel { id }` beside
 * `... on Product { rel { name } }`) is one field for the client, with the
 * selections of both. When the subgraph types the two differently (`Product!`
 * on the implementation, `Product` on the interface: a subgraph may refuse
 * the two under one key), the planner sends the fragment's copy under an
 * alias; renamed back, the two copies merge rather than one replacing the
 * other. And the key the router fetches for an entity call never shares a
 * response key with a client field that is something else there (an alias
 * of another field in a sibling fragment). Real @apollo/subgraph subgraphs.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])';

let things: TestSubgraph;
let products: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  things = await startSubgraph({
    name: 'things',
    typeDefs: `${LINK}
      type Query { things: [Thing] }
      interface Thing { id: ID! rel: Product title: String }
      type Product implements Thing @key(fields: "id") { id: ID! name: String rel: Product! @shareable title: String! @shareable }
      type Book implements Thing @key(fields: "id") { id: ID! rel: Product title: String }`,
    resolvers: {
      Query: {
        things: () => [
          { __typename: 'Product', id: 'p1' },
          { __typename: 'Book', id: 'b1' },
        ],
      },
      Thing: { __resolveType: (thing: { __typename: string }) => thing.__typename },
      Product: {
        __resolveReference: (ref: { id: string }) => ref,
        rel: (product: { id: string }) => ({ id: `${product.id}-rel` }),
        name: (product: { id: string }) => `name of ${product.id}`,
        title: (product: { id: string }) => `title of ${product.id}`,
      },
      Book: { rel: () => ({ id: 'book-rel' }), title: () => 'a book' },
    } as never,
  });
  // Shares the fields nullable: the supergraph has `rel: Product`, `title: String`.
  products = await startSubgraph({
    name: 'products',
    typeDefs: `${LINK}
      type Product @key(fields: "id") { id: ID! rel: Product @shareable title: String @shareable price: Int }`,
    resolvers: {
      Product: {
        __resolveReference: (ref: { id: string }) => ref,
        rel: (p: { id: string }) => ({ id: `${p.id}-rel` }),
        title: (p: { id: string }) => `title of ${p.id}`,
        // Only for keys it knows: a wrong key in the representation gets null.
        price: (p: { id: string }) => (p.id === 'p1' ? 10 : null),
      },
    } as never,
  });
  router = await startTestRouter({ subgraphs: [things, products], listen: true });
});

afterAll(async () => {
  await router?.close();
  await things?.close();
  await products?.close();
});

async function post(query: string): Promise<unknown> {
  const response = await fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return response.json();
}

it('answers a field selected on the interface and again in a fragment with both selections, in either order', async () => {
  expect(await post('{ things { rel { id } ... on Product { rel { name } } } }')).toEqual({
    data: { things: [{ rel: { id: 'p1-rel', name: 'name of p1-rel' } }, { rel: { id: 'book-rel' } }] },
  });
  expect(await post('{ things { ... on Product { rel { id } } rel { name } } }')).toEqual({
    data: { things: [{ rel: { id: 'p1-rel', name: 'name of p1-rel' } }, { rel: { name: 'name of book-rel' } }] },
  });
  // The subgraph got the fragment's copy under an alias: it may refuse `Product!` and `Product` under one key.
  expect(things.calls.at(-1)!.query).toMatch(/rel__sy_\d+: rel/);
});

it('answers a leaf selected on the interface and in a fragment once', async () => {
  expect(await post('{ things { title ... on Product { title } } }')).toEqual({ data: { things: [{ title: 'title of p1' }, { title: 'a book' }] } });
});

it('fetches the key under an internal key when the client aliases another field to its name, in another fragment', async () => {
  products.reset();
  expect(await post('{ things { id: title ... on Product { price } } }')).toEqual({ data: { things: [{ id: 'title of p1', price: 10 }, { id: 'a book' }] } });
  expect(products.calls[0]!.variables).toMatchObject({ representations: [{ __typename: 'Product', id: 'p1' }] });
  expect(await post('{ things { ... on Product { price } ... on Book { id: title } } }')).toEqual({ data: { things: [{ price: 10 }, { id: 'a book' }] } });
  // A plain client `id` is the key itself.
  expect(await post('{ things { id ... on Product { price } } }')).toEqual({ data: { things: [{ id: 'p1', price: 10 }, { id: 'b1' }] } });
});

it('refuses another field aliased __typename, which the router would take for the type', async () => {
  const response = await fetch(`${router.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: '{ things { __typename: title } }' }),
  });
  expect(response.status).toBe(400);
  expect((await response.json()).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
});

it("sends the fragment's copy under an alias no client key has, even one written like the router's", async () => {
  expect(await post('{ things { rel { id } ... on Product { rel { name } rel__sy_0: rel { id name } } } }')).toEqual({
    data: { things: [{ rel: { id: 'p1-rel', name: 'name of p1-rel' }, rel__sy_0: { id: 'p1-rel', name: 'name of p1-rel' } }, { rel: { id: 'book-rel' } }] },
  });
  expect(await post('{ things { rel { id } ... on Product { rel__sy_0: title rel { name } } } }')).toEqual({
    data: { things: [{ rel: { id: 'p1-rel', name: 'name of p1-rel' }, rel__sy_0: 'title of p1' }, { rel: { id: 'book-rel' } }] },
  });
});
