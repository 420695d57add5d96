import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphQLResponseBody } from '../../src/kernel/pipeline/stages.js';
import { startSubgraph, startTestRouter, type SubgraphOptions, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { gatewaysBenchGraph, TWO_ROOT_QUERY } from './graphs/gateways-bench.js';
import { generateOperation, seeded } from './support/generate-operations.js';
import { startHiveGateway, type HiveGateway } from './support/hive-gateway.js';
import { unmergedPlans } from './support/unmerged-plans.js';

/** Which products to fail in the products subgraph (an error at `name`). */
const failing = new Set<string>();
/** Subgraphs whose entity calls answer HTTP 500. */
const down = { products: false };

function graph(): SubgraphOptions[] {
  return gatewaysBenchGraph().map((subgraph) => {
    if (subgraph.name !== 'products') return subgraph;
    const resolvers = subgraph.resolvers as { Product: Record<string, unknown> };
    return {
      ...subgraph,
      reply: (call) => (down.products && call.query.includes('_entities(') ? { status: 500, body: 'down' } : undefined),
      resolvers: {
        ...subgraph.resolvers,
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
}

let subgraphs: TestSubgraph[] = [];
let merged: TestRouter;
let multiFetch: TestRouter;
let unmerged: TestRouter;
let hive: HiveGateway;
let supergraphSdl = '';

beforeAll(async () => {
  subgraphs = await Promise.all(graph().map((definition) => startSubgraph(definition)));
  merged = await startTestRouter({ subgraphs });
  multiFetch = await startTestRouter({ subgraphs, config: { engine: { enable_multi_fetch: true } } });
  unmerged = await startTestRouter({ subgraphs, plugins: [unmergedPlans(() => supergraphSdl)] });
  const { composeSubgraphs } = await import('../../src/compose/compose.js');
  supergraphSdl = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs }))).supergraphSdl;
  hive = await startHiveGateway(supergraphSdl);
});

afterAll(async () => {
  await Promise.all([merged?.close(), multiFetch?.close(), unmerged?.close(), hive?.close()]);
  await Promise.all(subgraphs.map((s) => s.close()));
});

function resetCalls(): void {
  for (const subgraph of subgraphs) subgraph.reset();
}

/** Subgraph calls per subgraph during one request. */
async function run(router: TestRouter, query: string, variables?: Record<string, unknown>) {
  resetCalls();
  const response = await router.query({ query, variables, headers: { 'x-switchyard-include-query-plan': 'true' } });
  expect(response.status).toBe(200);
  const calls = Object.fromEntries(subgraphs.map((s) => [s.name, s.calls.length]));
  const total = Object.values(calls).reduce((sum, n) => sum + n, 0);
  const entityCalls = subgraphs.flatMap((s) => s.calls.filter((c) => c.query.includes('_entities(')).map((c) => ({ subgraph: s.name, call: c })));
  return { body: response.body, calls, total, entityCalls };
}

/** Fetch nodes of a subgraph in the answer's `extensions.queryPlan`. */
function planFetches(body: GraphQLResponseBody, subgraph: string): number {
  let count = 0;
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (record.kind === 'Fetch' && record.subgraph === subgraph) count++;
    // A batched call's parts are one request: counted once, as the call.
    for (const [key, value] of Object.entries(record)) if (key !== 'parts' && typeof value === 'object') visit(value);
  };
  visit((body.extensions as { queryPlan: unknown }).queryPlan);
  return count;
}

/** Every representation an entity call sent: `$representations`, or each part's `$r<i>` of a batched call. */
function representationsOf(call: { variables: Record<string, unknown> }): unknown[] {
  return Object.entries(call.variables).flatMap(([name, value]) => (name === 'representations' || /^r\d+$/.test(name) ? (value as unknown[]) : []));
}

/** The data of two answers, and their errors' paths (the merged call reports a shared entity's error once). */
function expectSameAnswer(actual: GraphQLResponseBody, expected: GraphQLResponseBody): void {
  expect(actual.data).toEqual(expected.data);
  const paths = (body: GraphQLResponseBody) => new Set((body.errors ?? []).map((e) => JSON.stringify(e.path)));
  for (const path of paths(actual)) expect(paths(expected)).toContain(path);
  expect((actual.errors ?? []).length > 0).toBe((expected.errors ?? []).length > 0);
}

describe('fetch merging', () => {
  it('answers the two-root-field query in 6 subgraph calls, as the one-call-per-path plan does in 10', async () => {
    const one = await run(merged, TWO_ROOT_QUERY);
    expect(one.calls).toEqual({ accounts: 2, products: 2, inventory: 1, reviews: 1 });
    expect(one.total).toBe(6);
    const general = await run(unmerged, TWO_ROOT_QUERY);
    expect(general.total).toBe(10);
    expectSameAnswer(one.body, general.body);
    expect(one.body.errors).toBeUndefined();
    expect(one.body.data).toEqual((await hive.query(TWO_ROOT_QUERY)).data);
    // The reviews call looks up both root fields' objects, users and products, in one `_entities`.
    const reviews = one.entityCalls.find((c) => c.subgraph === 'reviews')!.call;
    const types = new Set((reviews.variables.representations as Array<{ __typename: string }>).map((r) => r.__typename));
    expect(types).toEqual(new Set(['User', 'Product']));
  });

  it('sends a product reached through both root fields once in the merged call', async () => {
    const one = await run(merged, TWO_ROOT_QUERY);
    for (const { call } of one.entityCalls) {
      const keys = representationsOf(call).map((r) => JSON.stringify(r));
      expect(new Set(keys).size).toBe(keys.length);
    }
    const general = await run(unmerged, TWO_ROOT_QUERY);
    const sent = (result: typeof one, subgraph: string) => result.entityCalls.filter((c) => c.subgraph === subgraph).reduce((sum, c) => sum + representationsOf(c.call).length, 0);
    // Products 1, 3 and 4 are under both root fields: one representation each instead of two.
    expect(sent(one, 'products')).toBeLessThan(sent(general, 'products'));
    expect(sent(one, 'inventory')).toBeLessThan(sent(general, 'inventory'));
  });

  it('shows merged calls in extensions.queryPlan: one Flatten with every path', async () => {
    const { body } = await run(merged, TWO_ROOT_QUERY);
    type Node = { kind: string; paths?: string[][]; node?: { subgraph: string; entries?: unknown[] } };
    const plan = (body.extensions as { queryPlan: { node: { kind: string; nodes: Node[] } } }).queryPlan;
    expect(plan.node.kind).toBe('Sequence');
    const reviews = plan.node.nodes.find((n) => n.kind === 'Flatten' && n.node?.subgraph === 'reviews')!;
    expect(reviews.paths).toEqual([
      ['users', '@'],
      ['topProducts', '@'],
    ]);
    expect(reviews.node?.entries).toHaveLength(2);
  });

  it('gives the same answers with engine.enable_multi_fetch on', async () => {
    const one = await run(multiFetch, TWO_ROOT_QUERY);
    expect(one.total).toBe(6);
    expectSameAnswer(one.body, (await run(unmerged, TWO_ROOT_QUERY)).body);
  });

  it('batches fetches that select one type differently as aliased `_entities` fields, and answers each path its own fields', async () => {
    const query = `{
      users { reviews { product { name } } }
      topProducts { reviews { author { reviews { product { price } } } } }
    }`;
    const one = await run(merged, query);
    const general = await run(unmerged, query);
    expectSameAnswer(one.body, general.body);
    // accounts, products (root), reviews (both branches, merged), and one products call: {name} and {price} as two aliased parts.
    expect(one.calls).toEqual({ accounts: 1, products: 2, inventory: 0, reviews: 1 });
    const selections = one.entityCalls.filter((c) => c.subgraph === 'products').map((c) => c.call.query);
    expect(selections).toHaveLength(1);
    expect(selections[0]).toMatch(
      /_0: _entities\(representations: \$r0\) \{ \.\.\. on Product \{ name \} \} _1: _entities\(representations: \$r1\) \{ \.\.\. on Product \{ price \} \}/,
    );
  });

  it('keeps apart fetches of one field with conflicting arguments', async () => {
    const query = `{
      users { reviews { product { t: title(lang: "fr") } } }
      topProducts { reviews { author { reviews { product { t: title(lang: "de") } } } } }
    }`;
    const one = await run(merged, query);
    expectSameAnswer(one.body, (await run(unmerged, query)).body);
    type Product = { product: { t: string } };
    const data = one.body.data as { users: Array<{ reviews: Product[] }>; topProducts: Array<{ reviews: Array<{ author: { reviews: Product[] } }> }> };
    expect(data.users[0]!.reviews[0]!.product.t).toBe('Table (fr)');
    expect(data.topProducts[0]!.reviews[0]!.author.reviews[0]!.product.t).toBe('Table (de)');
  });

  it('merges paths with the same selection under aliases, fragments and type conditions', async () => {
    const query = `
      fragment P on Product { label: name inStock }
      {
        users { reviews { item: product { ...P } } }
        topProducts { reviews { author { reviews { product { ... on Product { label: name inStock } } } } } }
      }`;
    const one = await run(merged, query);
    const general = await run(unmerged, query);
    expectSameAnswer(one.body, general.body);
    expect(one.body.errors).toBeUndefined();
    expect(one.calls.products).toBe(2);
    // The general plan has a products call per path (identical requests may still be shared in flight).
    expect(planFetches(one.body, 'products')).toBe(2);
    expect(planFetches(general.body, 'products')).toBe(3);
    expect(one.body.data).toEqual((await hive.query(query)).data);
  });

  it('reports a subgraph error in a merged call at a path of the entity, with the same data as the general path', async () => {
    failing.add('3');
    try {
      const one = await run(merged, TWO_ROOT_QUERY);
      const general = await run(unmerged, TWO_ROOT_QUERY);
      expect(one.total).toBe(6);
      expect(one.body.errors?.length).toBeGreaterThan(0);
      expect(one.body.errors?.[0]?.message).toContain('no name for 3');
      expectSameAnswer(one.body, general.body);
    } finally {
      failing.clear();
    }
  });

  it('answers a failed merged call with an error at one of its paths and nulls, with the same data as the general path', async () => {
    const query = '{ users { reviews { product { name } } } topProducts { reviews { author { reviews { product { name } } } } } }';
    down.products = true;
    try {
      const one = await run(merged, query);
      const general = await run(unmerged, query);
      expect(one.calls.products).toBe(2);
      expect(one.body.errors?.some((e) => e.extensions?.serviceName === 'products')).toBe(true);
      expectSameAnswer(one.body, general.body);
    } finally {
      down.products = false;
    }
  });

  it('answers generated operations exactly as the one-call-per-path plan, with no more calls', async () => {
    const random = seeded(21);
    let merges = 0;
    for (let i = 0; i < 40; i++) {
      const operation = generateOperation(random);
      const one = await run(merged, operation);
      const general = await run(unmerged, operation);
      expect(one.body.errors, operation).toBeUndefined();
      expect(one.body.data, operation).toEqual(general.body.data);
      const fetches = (body: GraphQLResponseBody) => subgraphs.reduce((sum, s) => sum + planFetches(body, s.name), 0);
      expect(fetches(one.body), operation).toBeLessThanOrEqual(fetches(general.body));
      if (fetches(one.body) < fetches(general.body)) merges++;
    }
    console.info(`generated operations: ${merges} of 40 planned with fewer calls`);
    // The generator reaches merged fetches, not only single paths.
    expect(merges).toBeGreaterThan(5);
  });
});

/**
 * Types no object has both of (Product, User) merged into one `_entities`
 * call answer into one list: a response key they share must have one shape
 * in the subgraph, or the subgraph refuses the whole document.
 */
describe('fetch merging across types', () => {
  let parts: TestSubgraph[] = [];
  let router: TestRouter;
  const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';
  /** The upc of `top.p`; "bad" makes its entity lookup throw (the whole `_entities` field then fails). */
  let pUpc = 'p1';
  /** The names subgraph answers every call with HTTP 503 and a GraphQL error (overloaded). */
  let overloaded = false;

  beforeAll(async () => {
    parts = await Promise.all([
      startSubgraph({
        name: 'tops',
        typeDefs: `${LINK}
          type Query { top: Top }
          type Top { p: Product q: Product u: User }
          type Product @key(fields: "upc") { upc: ID! }
          type User @key(fields: "id") { id: ID! }`,
        resolvers: { Query: { top: () => ({ p: { upc: pUpc }, q: { upc: 'p2' }, u: { id: 'u1' } }) } },
      }),
      startSubgraph({
        name: 'names',
        typeDefs: `${LINK}
          type Product @key(fields: "upc") { upc: ID! name: String! price: Int label: String }
          type User @key(fields: "id") { id: ID! name: String price: Float label: String }`,
        resolvers: {
          Product: {
            __resolveReference: (ref: { upc: string }) => {
              // Thrown at once (not a rejected promise): @apollo/subgraph then fails `_entities` for every representation.
              if (ref.upc === 'bad') throw new Error('no product bad');
              return { upc: ref.upc, name: `Table ${ref.upc}`, price: 3, label: 'product' };
            },
          },
          User: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, name: 'Ann', price: 1.5, label: 'user' }) },
        },
        reply: () => (overloaded ? { status: 503, body: '{"errors":[{"message":"overloaded"}]}' } : undefined),
      }),
    ]);
    router = await startTestRouter({ subgraphs: parts });
  });
  afterAll(async () => {
    await router?.close();
    await Promise.all(parts.map((s) => s.close()));
  });

  it('keeps apart fetches whose shared key has another type on the other type (String! vs String)', async () => {
    const response = await router.query('{ top { p { name } u { name } } }');
    expect(response.body).toEqual({ data: { top: { p: { name: 'Table p1' }, u: { name: 'Ann' } } } });
  });

  it('keeps apart fetches whose shared key is Int on one type and Float on the other, and still merges one shape', async () => {
    const response = await router.query('{ top { p { price } u { price } } }');
    expect(response.body).toEqual({ data: { top: { p: { price: 3 }, u: { price: 1.5 } } } });
    parts[1]!.reset();
    const same = await router.query('{ top { p { label } u { label } } }');
    expect(same.body).toEqual({ data: { top: { p: { label: 'product' }, u: { label: 'user' } } } });
    expect(parts[1]!.calls).toHaveLength(1);
  });

  it('asks each path again alone when one bad entity failed a merged or batched call: other paths keep their data', async () => {
    pUpc = 'bad';
    try {
      // Merged: one `_entities` list for p (Product) and u (User).
      parts[1]!.reset();
      const merged = await router.query('{ top { p { label } u { label } } }');
      // The merged call, then each path alone.
      expect(parts[1]!.calls).toHaveLength(3);
      // p's own entity failed (its nullable field is null, as with a call of its own); u keeps its data.
      expect(merged.body.data).toEqual({ top: { p: { label: null }, u: { label: 'user' } } });
      expect(merged.body.errors?.map((error) => error.message)).toEqual([expect.stringContaining('no product bad')]);
      // Batched: p and q select Product differently, so they go as `_0` and `_1` of one request.
      parts[1]!.reset();
      const batched = await router.query('{ top { p { name } q { price } } }');
      expect(parts[1]!.calls).toHaveLength(3);
      expect(batched.body.data).toEqual({ top: { p: null, q: { price: 3 } } });
      // (p's name is non-null: its null is reported too, as with a call of its own.)
      expect(batched.body.errors?.map((error) => error.message)).toContain('no product bad');
    } finally {
      pUpc = 'p1';
    }
  });

  it('does not ask again per path when the whole request failed (an HTTP error status): one call, as before', async () => {
    overloaded = true;
    try {
      parts[1]!.reset();
      const merged = await router.query('{ top { p { label } u { label } } }');
      expect(merged.body.errors?.length).toBeGreaterThan(0);
      expect(parts[1]!.calls).toHaveLength(1);
      parts[1]!.reset();
      await router.query('{ top { p { name } q { price } } }');
      expect(parts[1]!.calls).toHaveLength(1);
    } finally {
      overloaded = false;
    }
  });
});
