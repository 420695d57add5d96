/**
 * The planner's own names never reach a client's error paths. A field it
 * adds under an internal key (a `@requires` field whose client key is taken,
 * `__sy_weight`) that fails is reported at the nearest field the client
 * asked for; a field it sends under an alias (`name__sy_0`) is reported
 * under the client's key. And a client's own alias that looks like an
 * internal key gets the client's field, not the planner's. Real
 * @apollo/subgraph subgraphs.
 */
import { GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@external", "@requires", "@shareable"])';

const ITEMS: Record<string, { id: string; name: string; weight: number }> = {
  i1: { id: 'i1', name: 'Bolt', weight: 1 },
  i2: { id: 'i2', name: 'Nut', weight: 2 },
};

let inventory: TestSubgraph;
let shipping: TestSubgraph;
let reviews: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  inventory = await startSubgraph({
    name: 'inventory',
    typeDefs: `${LINK}
      type Query { item(id: ID!): Item items: [Item] }
      type Item @key(fields: "id") { id: ID! name: String! weight: Int! }`,
    resolvers: {
      Query: { item: (_: unknown, { id }: { id: string }) => ITEMS[id], items: () => Object.values(ITEMS) },
      Item: {
        __resolveReference: (ref: { id: string }) => ITEMS[ref.id],
        weight: (item: { id: string; weight: number }) => (item.id === 'i2' ? new GraphQLError('weight i2 broke', { extensions: { code: 'WEIGHT_BROKE' } }) : item.weight),
      },
    } as never,
  });
  shipping = await startSubgraph({
    name: 'shipping',
    typeDefs: `${LINK}
      type Item @key(fields: "id") { id: ID! weight: Int! @external cost: Int! @requires(fields: "weight") }`,
    resolvers: { Item: { __resolveReference: (ref: { id: string; weight: number }) => ref, cost: (item: { weight: number }) => item.weight * 10 } } as never,
  });
  reviews = await startSubgraph({
    name: 'reviews',
    typeDefs: `${LINK}
      type Query { latest: [Review] }
      type Review { id: ID! item: Item }
      type Item @key(fields: "id") { id: ID! }`,
    resolvers: {
      Query: {
        latest: () => [
          { id: 'r1', item: { id: 'i1' } },
          { id: 'r2', item: { id: 'i2' } },
        ],
      },
    } as never,
  });
  router = await startTestRouter({ subgraphs: [inventory, shipping, reviews] });
});

afterAll(async () => {
  await Promise.all([router?.close(), inventory?.close(), shipping?.close(), reviews?.close()]);
});

const paths = (errors: Array<{ path?: unknown }> | undefined) => (errors ?? []).map((e) => e.path);

describe('internal keys in error paths', () => {
  it("a failed @requires field fetched under an internal key is reported at the client's nearest field", async () => {
    // The client uses `weight` for `name`: the router fetches the real weight under an internal key.
    const { body } = await router.query('{ item(id: "i2") { weight: name cost } }');
    expect(body.data).toEqual({ item: null });
    expect(paths(body.errors)).toEqual([['item']]);
    expect(body.errors?.[0]).toMatchObject({ message: 'weight i2 broke', extensions: { code: 'WEIGHT_BROKE' } });
    expect(JSON.stringify(body)).not.toContain('__sy_');
  });

  it('the same inside a list and inside an entity fetch', async () => {
    const list = await router.query('{ items { weight: name cost } }');
    expect(paths(list.body.errors)).toEqual([['items', 1]]);
    expect(JSON.stringify(list.body)).not.toContain('__sy_');
    // reviews -> inventory (_entities, the weight under its internal key) -> shipping.
    const entities = await router.query('{ latest { id item { weight: name cost } } }');
    expect(entities.body.data).toEqual({
      latest: [
        { id: 'r1', item: { weight: 'Bolt', cost: 10 } },
        { id: 'r2', item: null },
      ],
    });
    expect(paths(entities.body.errors)).toEqual([['latest', 1, 'item']]);
    expect(JSON.stringify(entities.body)).not.toContain('__sy_');
  });

  it('without the clash the field keeps its own name in the path', async () => {
    const { body } = await router.query('{ item(id: "i2") { weight cost } }');
    expect(body.data).toEqual({ item: null });
    expect(paths(body.errors)).toContainEqual(['item', 'weight']);
  });

  it("a client alias spelled like the planner's internal key gets the client's field", async () => {
    const { body } = await router.query('{ item(id: "i1") { __sy_weight: name weight: name cost } }');
    expect(body).toEqual({ data: { item: { __sy_weight: 'Bolt', weight: 'Bolt', cost: 10 } } });
    const swapped = await router.query('{ item(id: "i1") { weight: name __sy_weight: id cost } }');
    expect(swapped.body).toEqual({ data: { item: { weight: 'Bolt', __sy_weight: 'i1', cost: 10 } } });
  });
});
