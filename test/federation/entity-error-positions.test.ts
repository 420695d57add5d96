/**
 * An entity found at several positions of a response is looked up once (one
 * representation), but when its lookup fails, each of those positions failed:
 * every one gets the subgraph's error, as graphql-js, Apollo Gateway and Hive
 * Gateway report it, so no field is null without an error saying why. Real
 * @apollo/subgraph subgraphs; a hostile one shows the copies stay bounded.
 */
import { GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';

const ITEMS = [{ id: 'i1' }, { id: 'i2' }, { id: 'i3' }];
/** Three reviews, two of them of i2: i2 sits at latest.1 and latest.2 (and items.1). */
const REVIEWS = [
  { id: 'r1', item: { id: 'i1' } },
  { id: 'r2', item: { id: 'i2' } },
  { id: 'r3', item: { id: 'i2' } },
];

const broke = (field: string, id: string) => new GraphQLError(`${field} ${id} broke`, { extensions: { code: `${field.toUpperCase()}_BROKE` } });

let inventory: TestSubgraph;
let pricing: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  inventory = await startSubgraph({
    name: 'inventory',
    typeDefs: `${LINK}
      type Query { items: [Item] latest: [Review] many(count: Int!, id: ID = "i1"): [Item] }
      type Review { id: ID! item: Item }
      type Item @key(fields: "id") { id: ID! }`,
    resolvers: {
      Query: { items: () => ITEMS, latest: () => REVIEWS, many: (_: unknown, { count, id }: { count: number; id: string }) => Array.from({ length: count }, () => ({ id })) },
    } as never,
  });
  pricing = await startSubgraph({
    name: 'pricing',
    typeDefs: `${LINK}
      type Item @key(fields: "id") { id: ID! note: String price: Int! }`,
    resolvers: {
      Item: {
        __resolveReference: (ref: { id: string }) => ref,
        note: (item: { id: string }) => (item.id === 'i2' ? broke('note', item.id) : `note of ${item.id}`),
        price: (item: { id: string }) => (item.id === 'i2' ? broke('price', item.id) : 7),
      },
    } as never,
    // Hostile answers for `many`: one error per position, every one at the one shared entity.
    reply: (call) => {
      const count = (call.variables?.representations as unknown[] | undefined)?.length;
      if (!call.query.includes('note') || count !== 1 || !hostile) return undefined;
      const errors = Array.from({ length: hostile }, (_, i) => ({ message: distinct ? `note broke ${i}` : 'note broke', path: ['_entities', 0, 'note'] }));
      return { body: JSON.stringify({ data: { _entities: [{ note: null }] }, errors }) };
    },
  });
  router = await startTestRouter({ subgraphs: [inventory, pricing] });
});

afterAll(async () => {
  await Promise.all([router?.close(), inventory?.close(), pricing?.close()]);
});

let hostile = 0;
/** Whether the hostile answer's errors carry distinct messages. */
let distinct = false;

const error = (field: string, path: Array<string | number>) => ({
  message: `${field} i2 broke`,
  path,
  extensions: { code: `${field.toUpperCase()}_BROKE` },
});

describe('errors of an entity found at several positions', () => {
  it('a nullable field: the error at each position, across two paths of one merged call', async () => {
    const { body } = await router.query('{ latest { item { note } } items { id note } }');
    expect(body.data).toEqual({
      latest: [{ item: { note: 'note of i1' } }, { item: { note: null } }, { item: { note: null } }],
      items: [
        { id: 'i1', note: 'note of i1' },
        { id: 'i2', note: null },
        { id: 'i3', note: 'note of i3' },
      ],
    });
    expect(body.errors).toEqual(
      expect.arrayContaining([error('note', ['latest', 1, 'item', 'note']), error('note', ['latest', 2, 'item', 'note']), error('note', ['items', 1, 'note'])]),
    );
    expect(body.errors).toHaveLength(3);
  });

  it("a non-null field: the subgraph's error at each position, no made-up 'Cannot return null'", async () => {
    const { body } = await router.query('{ latest { id item { price } } }');
    expect(body).toEqual({
      data: {
        latest: [
          { id: 'r1', item: { price: 7 } },
          { id: 'r2', item: null },
          { id: 'r3', item: null },
        ],
      },
      errors: [error('price', ['latest', 1, 'item', 'price']), error('price', ['latest', 2, 'item', 'price'])],
    });
  });

  it('a subgraph sending an error per position for one shared entity gets at most one copy per position more', async () => {
    hostile = 2000;
    try {
      const { status, body } = await router.query('{ many(count: 2000) { note } }');
      expect(status).toBe(200);
      // 2,000 errors each at the 2,000 positions would be 4,000,000; copies are bounded by the positions.
      expect(body.errors!.length).toBeLessThanOrEqual(2000 + 2000);
      const paths = new Set(body.errors!.map((e) => JSON.stringify(e.path)));
      expect(paths.size).toBe(2000);
    } finally {
      hostile = 0;
    }
  });

  it('two failing fields of an entity at three positions: both errors at every position', async () => {
    const { body } = await router.query('{ many(count: 3, id: "i2") { note price } }');
    expect(body.data).toEqual({ many: [null, null, null] });
    expect(body.errors?.map((e) => [e.message, e.path])).toEqual([
      ...[0, 1, 2].map((i) => ['note i2 broke', ['many', i, 'note']]),
      ...[0, 1, 2].map((i) => ['price i2 broke', ['many', i, 'price']]),
    ]);
  });

  it('an entity reached through one shared parent at many positions: one error per position, not per position squared', async () => {
    const people = await startSubgraph({
      name: 'people',
      typeDefs: `${LINK}
        type Owner @key(fields: "id") { id: ID! name: String }`,
      resolvers: { Owner: { __resolveReference: (ref: unknown) => ref, name: () => new GraphQLError('name broke') } } as never,
    });
    const owners = await startSubgraph({
      name: 'owners',
      typeDefs: `${LINK}
        type Item @key(fields: "id") { id: ID! owner: Owner }
        type Owner @key(fields: "id") { id: ID! }`,
      resolvers: { Item: { __resolveReference: (ref: unknown) => ref, owner: () => ({ id: 'o1' }) } } as never,
    });
    const chain = await startTestRouter({ subgraphs: [inventory, owners, people] });
    try {
      const { body } = await chain.query('{ many(count: 50) { owner { name } } }');
      expect(body.errors?.map((e) => e.path)).toEqual(Array.from({ length: 50 }, (_, i) => ['many', i, 'owner', 'name']));
    } finally {
      await Promise.all([chain.close(), people.close(), owners.close()]);
    }
  });

  it('two different errors at one path of a shared entity: each at every position', async () => {
    hostile = 2;
    distinct = true;
    try {
      const { body } = await router.query('{ many(count: 3) { note } }');
      expect(body.errors?.map((e) => [e.message, e.path])).toEqual([
        ...[0, 1, 2].map((i) => ['note broke 0', ['many', i, 'note']]),
        ...[0, 1, 2].map((i) => ['note broke 1', ['many', i, 'note']]),
      ]);
    } finally {
      hostile = 0;
      distinct = false;
    }
  });
});
