/**
 * A reference resolver that throws makes @apollo/subgraph fail the whole
 * `_entities` field: `data: null` and the error at `["_entities"]`, naming no
 * entity. Every position the lookup was to fill failed, as when the request
 * itself fails: the error goes to each, and no field is left null with a
 * made-up 'Cannot return null' instead of the subgraph's reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';

let catalog: TestSubgraph;
let prices: TestSubgraph;
let router: TestRouter;
let multiFetch: TestRouter;

beforeAll(async () => {
  catalog = await startSubgraph({
    name: 'catalog',
    typeDefs: `${LINK}
      type Query { items: [Item] featured: Item }
      type Item @key(fields: "id") { id: ID! name: String }`,
    resolvers: {
      Query: { items: () => [{ id: 'i1', name: 'one' }, null, { id: 'i2', name: 'two' }, { id: 'i3', name: 'three' }], featured: () => ({ id: 'i1', name: 'one' }) },
    } as never,
  });
  prices = await startSubgraph({
    name: 'prices',
    typeDefs: `${LINK}
      type Item @key(fields: "id") { id: ID! price: Int! note: String }`,
    resolvers: {
      Item: {
        __resolveReference: (ref: { id: string }) => {
          if (ref.id === 'i3') throw new Error('no price list for i3');
          return { id: ref.id, price: 7, note: `note of ${ref.id}` };
        },
      },
    } as never,
  });
  router = await startTestRouter({ subgraphs: [catalog, prices] });
  multiFetch = await startTestRouter({ subgraphs: [catalog, prices], config: { engine: { enable_multi_fetch: true } } });
});

afterAll(async () => {
  await Promise.all([router?.close(), multiFetch?.close(), catalog?.close(), prices?.close()]);
});

describe('an entity lookup the subgraph failed as a whole', () => {
  it("a non-null field: the subgraph's error at each position it was to fill, no made-up 'Cannot return null'", async () => {
    const { body } = await router.query('{ items { id name price } }');
    expect(body).toEqual({
      data: { items: [null, null, null, null] },
      errors: [0, 2, 3].map((i) => ({ message: 'no price list for i3', path: ['items', i] })),
    });
  });

  it('a nullable field: the error at each position, the fields of other subgraphs kept', async () => {
    const { body } = await router.query('{ items { id name note } }');
    expect(body).toEqual({
      data: {
        items: [{ id: 'i1', name: 'one', note: null }, null, { id: 'i2', name: 'two', note: null }, { id: 'i3', name: 'three', note: null }],
      },
      errors: [0, 2, 3].map((i) => ({ message: 'no price list for i3', path: ['items', i] })),
    });
  });

  it("with engine.enable_multi_fetch: the failed lookup's error at each of its positions, the other lookup answered", async () => {
    prices.reset();
    const { body } = await multiFetch.query('{ items { id note } featured { note } }');
    expect(body).toEqual({
      data: {
        items: [{ id: 'i1', note: null }, null, { id: 'i2', note: null }, { id: 'i3', note: null }],
        featured: { note: 'note of i1' },
      },
      errors: [0, 2, 3].map((i) => ({ message: 'no price list for i3', path: ['items', i] })),
    });
  });
});
