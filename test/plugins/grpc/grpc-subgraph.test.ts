import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogService, inventorySubgraph } from './catalog-fixture.js';
import { P1_ANSWER, P1_SELECTION } from './catalog-p1.js';
import { startGraph, type TestGraph } from './grpc-graph.js';

let graph: TestGraph;

beforeAll(async () => {
  graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph] });
});

afterAll(async () => {
  await graph?.close();
});

describe('a gRPC subgraph behind the router', () => {
  it('answers a root query from its RPC, with wrappers, lists, nested lists, enums and custom scalars', async () => {
    const response = await graph.query(`query ($id: ID!) { product(id: $id) { ${P1_SELECTION} } }`, { id: 'p1' });
    expect(response).toEqual({ status: 200, body: { data: { product: P1_ANSWER } } });
    expect(graph.grpc.catalog!.calls.at(-1)).toMatchObject({ method: 'QueryProduct', request: { id: 'p1' } });
  });

  it('gives null for unset wrappers, lists and messages, and leaves defaults of non-null fields as they are', async () => {
    const response = await graph.query(`{ product(id: "p2") { stock discontinued aliases metadata category { name } tags sizes kind } }`);
    expect(response.body).toEqual({
      data: { product: { stock: null, discontinued: null, aliases: null, metadata: null, category: null, tags: [], sizes: [], kind: 'DIGITAL' } },
    });
  });

  it('answers null for a root field the service leaves unset', async () => {
    const response = await graph.query(`{ product(id: "nope") { id } }`);
    expect(response.body).toEqual({ data: { product: null } });
  });

  it('sends input objects with enum lists, wrappers and default arguments in the request message', async () => {
    graph.grpc.catalog!.calls.length = 0;
    const response = await graph.query(
      `query ($filter: ProductFilter) { products(filter: $filter) { id } cheap: products(filter: { minPrice: 20, tagGroups: [["a", "b"], []] }, first: 1) { id } }`,
      { filter: { kinds: ['PHYSICAL'] } },
    );
    expect(response.body).toEqual({ data: { products: [{ id: 'p1' }, { id: 'p3' }], cheap: [{ id: 'p1' }] } });
    const requests = graph.grpc.catalog!.calls.map((call) => call.request);
    expect(requests).toContainEqual({ filter: { kinds: { list: { items: ['PRODUCT_KIND_PHYSICAL'] } } }, first: { value: 10 } });
    expect(requests).toContainEqual({
      filter: { min_price: { value: 20 }, tag_groups: { list: { items: [{ list: { items: ['a', 'b'] } }, { list: { items: [] } }] } } },
      first: { value: 1 },
    });
  });

  it('sends each request of the same operation its own argument values: variables anew every time, literals the same', async () => {
    graph.grpc.catalog!.calls.length = 0;
    const operation = `query ($id: ID!) { byVariable: product(id: $id) { id } byLiteral: product(id: "p1") { id } }`;
    for (const id of ['p2', 'p3', 'p2']) {
      expect((await graph.query(operation, { id })).body).toEqual({ data: { byVariable: { id }, byLiteral: { id: 'p1' } } });
    }
    const ids = graph.grpc.catalog!.calls.map((call) => call.request.id);
    expect(ids.sort()).toEqual(['p1', 'p1', 'p1', 'p2', 'p2', 'p3']);
  });

  it('resolves interfaces and unions from the oneof member the service set, with fragments, aliases and __typename', async () => {
    const response = await graph.query(`
      fragment ArticleParts on Article { title author { name } }
      {
        article: node(id: "a1") { __typename id ...ArticleParts }
        author: node(id: "u1") { __typename ... on Author { name } ... on Article { title } }
        missing: node(id: "zz") { id }
        search(term: "tables") { __typename ... on Product { name kind } ...ArticleParts }
        serverTime
        __typename
      }
    `);
    expect(response.body).toEqual({
      data: {
        article: { __typename: 'Article', id: 'a1', title: 'Choosing a table', author: { name: 'Ada' } },
        author: { __typename: 'Author', name: 'Ada' },
        missing: null,
        search: [
          { __typename: 'Product', name: 'Table', kind: 'PHYSICAL' },
          { __typename: 'Article', title: 'About tables', author: { name: 'Ada' } },
        ],
        serverTime: '2025-06-01T12:00:00Z',
        __typename: 'Query',
      },
    });
  });

  it('honours @skip and @include with variables', async () => {
    const response = await graph.query(`query ($yes: Boolean!) { product(id: "p3") { name @include(if: $yes) price @skip(if: $yes) } }`, { yes: true });
    expect(response.body).toEqual({ data: { product: { name: 'Lamp' } } });
  });

  it('runs mutation fields one after the other, in the order written', async () => {
    graph.grpc.catalog!.calls.length = 0;
    const response = await graph.query(`mutation { first: setPrice(id: "p3", price: 31) { price } second: tagProduct(id: "p3", tags: ["sale"]) { price tags } }`);
    expect(response.body).toEqual({ data: { first: { price: 31 }, second: { price: 31, tags: ['light', 'sale'] } } });
    expect(graph.grpc.catalog!.calls.map((call) => call.method)).toEqual(['MutationSetPrice', 'MutationTagProduct']);
  });

  it('resolves a field with arguments through its resolver RPC, one call for all parents', async () => {
    graph.grpc.catalog!.calls.length = 0;
    const response = await graph.query(`{ products { id reviews(limit: 1) { rating body } } }`);
    expect(response.body).toEqual({
      data: {
        products: [
          { id: 'p1', reviews: [{ rating: 5, body: 'Solid.' }] },
          { id: 'p2', reviews: [] },
          { id: 'p3', reviews: [{ rating: 2, body: 'Too dim.' }] },
        ],
      },
    });
    const resolves = graph.grpc.catalog!.calls.filter((call) => call.method === 'ResolveProductReviews');
    expect(resolves).toHaveLength(1);
    expect(resolves[0]!.request).toEqual({ context: [{ id: 'p1' }, { id: 'p2' }, { id: 'p3' }], field_args: { limit: 1 } });
  });

  it('looks entities up for an HTTP subgraph with one RPC per fetch', async () => {
    graph.grpc.catalog!.calls.length = 0;
    const response = await graph.query(`{ warehouse { id inStock name kind } }`);
    expect(response.body).toEqual({
      data: {
        warehouse: [
          { id: 'p1', inStock: true, name: 'Table', kind: 'PHYSICAL' },
          { id: 'p2', inStock: true, name: 'Manual', kind: 'DIGITAL' },
          { id: 'p3', inStock: false, name: 'Lamp', kind: 'PHYSICAL' },
        ],
      },
    });
    expect(graph.grpc.catalog!.calls).toEqual([{ method: 'LookupProductById', request: { keys: [{ id: 'p1' }, { id: 'p2' }, { id: 'p3' }] }, metadata: expect.any(Object) }]);
  });

  it('joins its root results to an HTTP subgraph, and computes @requires fields through their RPC', async () => {
    graph.grpc.catalog!.calls.length = 0;
    const response = await graph.query(`{ products(filter: { kinds: [PHYSICAL] }) { name inStock shippingEstimate } }`);
    expect(response.body).toEqual({
      data: {
        products: [
          { name: 'Table', inStock: true, shippingEstimate: 20 },
          { name: 'Lamp', inStock: false, shippingEstimate: 1 },
        ],
      },
    });
    const requires = graph.grpc.catalog!.calls.filter((call) => call.method === 'RequireProductShippingEstimateById');
    expect(requires.map((call) => call.request)).toEqual([
      {
        context: [
          { key: { id: 'p1' }, fields: { weight: 40 } },
          { key: { id: 'p3' }, fields: { weight: 2 } },
        ],
      },
    ]);
    expect(graph.grpc.catalog!.calls.map((call) => call.method)).not.toContain('LookupProductById');
  });
});
