/**
 * A client variable named `$representations` (or `$representations_`) is the
 * client's: entity fetches that send it put their representations under
 * another name, whether sent alone, batched, or answered by the response
 * cache (whose entries stay keyed by the client's value too).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../plugins/response-cache/index.js';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { startSubgraph, startTestRouter, type SubgraphCall, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { unmergedPlans } from './support/unmerged-plans.js';

const link = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`;
const PRODUCTS = ['p1', 'p2', 'p3'];

let products: TestSubgraph;
let reviews: TestSubgraph;
let plain: TestRouter;
let cached: TestRouter;
/** Plans without fetch merging, their entity fetches of one wave sent as one request (`engine.enable_multi_fetch`). */
let multiFetch: TestRouter;

beforeAll(async () => {
  products = await startSubgraph({
    name: 'products',
    typeDefs: /* GraphQL */ `
      ${link}
      type Query {
        products(first: Int!): [Product!]!
        top: Product
      }
      type Product @key(fields: "upc") {
        upc: ID!
      }
    `,
    resolvers: {
      Query: {
        products: (_: unknown, args: { first: number }) => PRODUCTS.slice(0, args.first).map((upc) => ({ upc })),
        top: () => ({ upc: 'p3' }),
      },
    },
  });
  reviews = await startSubgraph({
    name: 'reviews',
    typeDefs: /* GraphQL */ `
      ${link}
      type Product @key(fields: "upc") {
        upc: ID!
        reviews(first: Int, tag: String): [Review!]!
      }
      type Review {
        body: String!
        stars: Int!
      }
    `,
    resolvers: {
      Product: {
        __resolveReference: (reference: { upc: string }) => reference,
        reviews: (product: { upc: string }, args: { first?: number | null; tag?: string | null }) =>
          [1, 2, 3].slice(0, args.first ?? 3).map((n) => ({ body: `${product.upc}#${n}${args.tag ? `:${args.tag}` : ''}`, stars: n })),
      },
    },
    reply: () => ({ headers: { 'cache-control': 'public, max-age=60' } }),
  });
  const subgraphs = [products, reviews];
  plain = await startTestRouter({ subgraphs });
  const { supergraphSdl } = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
  multiFetch = await startTestRouter({ subgraphs, config: { engine: { enable_multi_fetch: true } }, plugins: [unmergedPlans(() => supergraphSdl)] });
  cached = await startTestRouter({ subgraphs, plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } })] });
});

afterAll(async () => {
  await Promise.all([plain?.close(), cached?.close(), multiFetch?.close()]);
  await Promise.all([products?.close(), reviews?.close()]);
});

/** Runs a query and returns its answer with the entity calls the reviews subgraph got. */
async function run(router: TestRouter, query: string, variables: Record<string, unknown>) {
  reviews.reset();
  const response = await router.query({ query, variables });
  expect(response.status).toBe(200);
  const calls = reviews.calls.filter((call) => call.query.includes('_entities('));
  return { body: response.body, calls };
}

/** The reviews a product gets for `first` and `tag`, as the subgraph makes them. */
function reviewsOf(upc: string, first: number, tag?: string) {
  return [1, 2, 3].slice(0, first).map((n) => ({ body: `${upc}#${n}${tag ? `:${tag}` : ''}` }));
}

/** The variable of a call holding a list of representations (objects with `__typename`). */
function representationsIn(call: SubgraphCall): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(call.variables).filter(([, value]) => Array.isArray(value) && value.some((v) => typeof v === 'object' && v !== null && '__typename' in v)),
  ) as Record<string, unknown[]>;
}

const SINGLE = 'query Q($n: Int!, $representations: Int) { products(first: $n) { upc reviews(first: $representations) { body } } }';

describe('a client variable named $representations', () => {
  it('keeps its value in an entity fetch, whose representations go under another name', async () => {
    const { body, calls } = await run(plain, SINGLE, { n: 2, representations: 1 });
    expect(body).toEqual({
      data: {
        products: [
          { upc: 'p1', reviews: reviewsOf('p1', 1) },
          { upc: 'p2', reviews: reviewsOf('p2', 1) },
        ],
      },
    });
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.query).toContain('_entities(representations: $representations_)');
    expect(call.variables.representations).toBe(1);
    expect(call.variables.representations_).toEqual([
      { __typename: 'Product', upc: 'p1' },
      { __typename: 'Product', upc: 'p2' },
    ]);
  });

  it('leaves the common case as it was: `$representations` holds the representations', async () => {
    const { body, calls } = await run(plain, 'query Q($n: Int!, $first: Int) { products(first: $n) { reviews(first: $first) { body } } }', { n: 1, first: 2 });
    expect(body).toEqual({ data: { products: [{ reviews: reviewsOf('p1', 2) }] } });
    expect(calls[0]!.query).toContain('query Q__reviews__1($representations: [_Any!]!, $first: Int) { _entities(representations: $representations)');
    expect(Object.keys(representationsIn(calls[0]!))).toEqual(['representations']);
  });

  it('takes another `_` when `$representations_` is the client’s too', async () => {
    const query = 'query ($representations: Int, $representations_: String) { products(first: 1) { reviews(first: $representations, tag: $representations_) { body } } }';
    const { body, calls } = await run(plain, query, { representations: 2, representations_: 'x' });
    expect(body).toEqual({ data: { products: [{ reviews: reviewsOf('p1', 2, 'x') }] } });
    expect(Object.keys(representationsIn(calls[0]!))).toEqual(['representations__']);
    expect(calls[0]!.variables).toMatchObject({ representations: 2, representations_: 'x' });
  });

  it('keeps its value in a batched call of several `_entities` parts', async () => {
    // Two paths with different selections on one subgraph: one call, one part each.
    const query = 'query ($representations: Int) { products(first: 2) { reviews(first: $representations) { body } } top { reviews(first: 1) { stars } } }';
    const { body, calls } = await run(plain, query, { representations: 2 });
    expect(body).toEqual({
      data: { products: [{ reviews: reviewsOf('p1', 2) }, { reviews: reviewsOf('p2', 2) }], top: { reviews: [{ stars: 1 }] } },
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.variables.representations).toBe(2);
    expect(Object.keys(representationsIn(calls[0]!)).sort()).toEqual(['r0', 'r1']);
  });

  it('keeps its value when unmerged fetches of one wave go out as one request (multi-fetch)', async () => {
    const query = 'query ($representations: Int) { products(first: 2) { reviews(first: $representations) { body } } top { reviews(first: 1) { stars } } }';
    const { body, calls } = await run(multiFetch, query, { representations: 2 });
    expect(body).toEqual({
      data: { products: [{ reviews: reviewsOf('p1', 2) }, { reviews: reviewsOf('p2', 2) }], top: { reviews: [{ stars: 1 }] } },
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.query).toContain('$representations: Int');
    expect(calls[0]!.variables.representations).toBe(2);
  });
});

describe('with the response cache', () => {
  it('answers right, hits on repeat, and keys entries by the client’s value', async () => {
    const first = await run(cached, SINGLE, { n: 2, representations: 2 });
    const expected = {
      data: {
        products: [
          { upc: 'p1', reviews: reviewsOf('p1', 2) },
          { upc: 'p2', reviews: reviewsOf('p2', 2) },
        ],
      },
    };
    expect(first.body).toEqual(expected);
    expect(first.calls).toHaveLength(1);

    const again = await run(cached, SINGLE, { n: 2, representations: 2 });
    expect(again.body).toEqual(expected);
    expect(again.calls).toHaveLength(0);

    // Another value of the client's `$representations` is another entry.
    const other = await run(cached, SINGLE, { n: 2, representations: 1 });
    expect(other.body).toEqual({
      data: {
        products: [
          { upc: 'p1', reviews: reviewsOf('p1', 1) },
          { upc: 'p2', reviews: reviewsOf('p2', 1) },
        ],
      },
    });
    expect(other.calls).toHaveLength(1);
  });

  it('sends only the misses on a partial hit, under the renamed variable', async () => {
    await run(cached, SINGLE, { n: 1, representations: 3 });
    const { body, calls } = await run(cached, SINGLE, { n: 3, representations: 3 });
    expect(body).toEqual({ data: { products: PRODUCTS.map((upc) => ({ upc, reviews: reviewsOf(upc, 3) })) } });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.variables.representations).toBe(3);
    expect(calls[0]!.variables.representations_).toEqual([
      { __typename: 'Product', upc: 'p2' },
      { __typename: 'Product', upc: 'p3' },
    ]);
  });

  it('answers batched parts from the entries a lone call wrote, keyed by the client’s value', async () => {
    const query = 'query ($representations: Int) { products(first: 2) { reviews(first: $representations) { body } } top { reviews(first: 1) { stars } } }';
    const expected = (n: number) => ({
      data: { products: [{ reviews: reviewsOf('p1', n) }, { reviews: reviewsOf('p2', n) }], top: { reviews: [{ stars: 1 }] } },
    });
    // The products' part was cached by the lone calls above (`$representations: 1`): only the top's part goes out.
    const first = await run(cached, query, { representations: 1 });
    expect(first.body).toEqual(expected(1));
    expect(first.calls).toHaveLength(1);
    expect(Object.keys(representationsIn(first.calls[0]!))).toEqual(['r1']);
    const hit = await run(cached, query, { representations: 1 });
    expect(hit.body).toEqual(expected(1));
    expect(hit.calls).toHaveLength(0);
    // A value not seen yet misses the products' part only.
    const miss = await run(cached, query, { representations: 0 });
    expect(miss.body).toEqual(expected(0));
    expect(miss.calls).toHaveLength(1);
    expect(miss.calls[0]!.variables.representations).toBe(0);
    expect(Object.keys(representationsIn(miss.calls[0]!))).toEqual(['r0']);
  });
});
