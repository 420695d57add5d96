/**
 * Batched entity calls at run time (src/kernel/execute/batch-call.ts): one
 * request of aliased `_entities` parts, each part answered and reported as
 * if it had been a call of its own, also when the subgraph fails or answers
 * nonsense.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphQLResponseBody } from '../../../src/kernel/pipeline/stages.js';
import { startSubgraph, startTestRouter, type SubgraphReply, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { gatewaysBenchGraph } from '../../federation/graphs/gateways-bench.js';
import { unmergedPlans } from '../../federation/support/unmerged-plans.js';

/** Products of the users' reviews select { name }; those of the top products' authors' reviews { price }. */
const BATCHED = `{
  users { id reviews { product { upc name } } }
  topProducts { upc reviews { author { id reviews { product { upc price } } } } }
}`;

/** What the products subgraph answers to batched calls instead of the real answer. */
let productsReply: SubgraphReply | undefined;
/** Products whose `name` fails. */
const failing = new Set<string>();

let subgraphs: TestSubgraph[] = [];
let router: TestRouter;
let unbatched: TestRouter;
let supergraphSdl = '';

beforeAll(async () => {
  const definitions = gatewaysBenchGraph().map((definition) => {
    if (definition.name !== 'products') return definition;
    const resolvers = definition.resolvers as { Product: Record<string, unknown> };
    return {
      ...definition,
      reply: (call: { query: string }) => (call.query.includes('_0: _entities(') ? productsReply : undefined),
      resolvers: {
        ...definition.resolvers,
        Product: {
          ...resolvers.Product,
          name: (product: { upc: string; name: string }) => {
            if (failing.has(product.upc)) throw new Error(`no name for ${product.upc}`);
            return product.name;
          },
        },
      },
    };
  });
  subgraphs = await Promise.all(definitions.map((definition) => startSubgraph(definition)));
  router = await startTestRouter({ subgraphs });
  unbatched = await startTestRouter({ subgraphs, plugins: [unmergedPlans(() => supergraphSdl)] });
  const { composeSubgraphs } = await import('../../../src/compose/compose.js');
  supergraphSdl = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs }))).supergraphSdl;
});

afterAll(async () => {
  await Promise.all([router?.close(), unbatched?.close()]);
  await Promise.all(subgraphs.map((s) => s.close()));
});

function products(): TestSubgraph {
  return subgraphs.find((s) => s.name === 'products')!;
}

async function both(query: string): Promise<{ batched: GraphQLResponseBody; general: GraphQLResponseBody; productCalls: number }> {
  products().reset();
  const batched = await router.query(query);
  expect(batched.status).toBe(200);
  const productCalls = products().calls.filter((call) => call.query.includes('_entities(')).length;
  const general = await unbatched.query(query);
  return { batched: batched.body, general: general.body, productCalls };
}

const pathsOf = (body: GraphQLResponseBody) => new Set((body.errors ?? []).map((e) => JSON.stringify(e.path)));
const codesOf = (body: GraphQLResponseBody) => (body.errors ?? []).map((e) => e.extensions?.code);

describe('batched entity calls', () => {
  it('answers as the one-call-per-path plan does, in one call of aliased parts', async () => {
    const { batched, general, productCalls } = await both(BATCHED);
    expect(productCalls).toBe(1);
    expect(batched.errors).toBeUndefined();
    expect(batched.data).toEqual(general.data);
  });

  it('shows the batched call in extensions.queryPlan: one Fetch with its parts, under a Flatten with every path', async () => {
    const response = await router.query({ query: BATCHED, headers: { 'x-switchyard-include-query-plan': 'true' } });
    const flattens: Array<{ paths?: string[][]; node: { subgraph: string; parts?: Array<{ mergePath: string[]; selectionSet: string }> } }> = [];
    const visit = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      if (record.kind === 'Flatten') flattens.push(record as never);
      for (const value of Object.values(record)) visit(value);
    };
    visit((response.body.extensions as { queryPlan: unknown }).queryPlan);
    const batch = flattens.find((f) => f.node.subgraph === 'products' && f.node.parts);
    expect(batch?.node.parts?.map((part) => part.selectionSet)).toEqual(['{ ... on Product { name } }', '{ ... on Product { price } }']);
    expect(batch?.paths).toEqual(batch?.node.parts?.map((part) => part.mergePath));
  });

  it("reports a part's subgraph errors at that part's own paths, with the same data as the general path", async () => {
    failing.add('1');
    try {
      const { batched, general } = await both(BATCHED);
      expect(batched.data).toEqual(general.data);
      expect(pathsOf(batched)).toEqual(pathsOf(general));
      expect([...pathsOf(batched)].every((path) => path.startsWith('["users"'))).toBe(true);
    } finally {
      failing.clear();
    }
  });

  it('answers a failed batched call with a SUBGRAPH_REQUEST_FAILED at each position of each part, and the data the general path has', async () => {
    productsReply = { status: 500, body: 'down' };
    try {
      const result = await router.query(BATCHED);
      expect(result.status).toBe(200);
      const errors = result.body.errors ?? [];
      expect(new Set(codesOf(result.body))).toEqual(new Set(['SUBGRAPH_REQUEST_FAILED']));
      // Each product position the call was to fill, users' part first: no position is left null without its error.
      const paths = errors.map((e) => JSON.stringify(e.path));
      expect(new Set(paths).size).toBe(paths.length);
      expect([...new Set(errors.map((e) => e.path?.[0]))]).toEqual(['users', 'topProducts']);
      for (const error of errors) expect(error.path?.at(-1)).toBe('product');
      const data = result.body.data as { users: Array<{ reviews: unknown[] }> };
      expect(errors.filter((e) => e.path?.[0] === 'users')).toHaveLength(data.users.reduce((n, user) => n + user.reviews.length, 0));
      const users = (result.body.data as { users: Array<{ reviews: Array<{ product: { upc: string; name: unknown } }> }> }).users;
      expect(users[0]!.reviews[0]!.product).toEqual({ upc: users[0]!.reviews[0]!.product.upc, name: null });
    } finally {
      productsReply = undefined;
    }
  });

  it('reports a malformed part (not a list, wrong length, missing) as SUBGRAPH_INVALID_RESPONSE, never a crash', async () => {
    for (const data of [{ _0: 'nonsense', _1: [] }, { _0: [{}], _1: null }, {}]) {
      productsReply = { body: JSON.stringify({ data }) };
      try {
        const result = await router.query(BATCHED);
        expect(result.status, JSON.stringify(data)).toBe(200);
        expect(result.body.data, JSON.stringify(data)).toBeTruthy();
        const codes = codesOf(result.body);
        if (Object.keys(data).length > 0) expect(codes, JSON.stringify(data)).toContain('SUBGRAPH_INVALID_RESPONSE');
      } finally {
        productsReply = undefined;
      }
    }
  });

  it('sends a lone part with objects as an ordinary `_entities` call', async () => {
    // No top products: only the users' part has objects to look up.
    const query = '{ users { reviews { product { price } } } topProducts(first: 0) { reviews { author { reviews { product { name } } } } } }';
    products().reset();
    const result = await router.query(query);
    expect(result.body.errors).toBeUndefined();
    const calls = products().calls.filter((call) => call.query.includes('_entities('));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.query).toContain('_entities(representations: $representations)');
    expect(result.body.data).toEqual((await unbatched.query(query)).body.data);
  });
});
