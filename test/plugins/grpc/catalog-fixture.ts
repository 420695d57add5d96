/**
 * The test graph of the grpc plugin: `catalog`, a gRPC service using every
 * construct the generator maps (wrappers, lists, nested lists, enums, custom
 * scalars, inputs, an interface, a union, an entity with `@requires`, a field
 * with arguments), and `inventory`, an HTTP subgraph joined to it by the
 * `Product` entity.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import type { GrpcSubgraphDefinition } from './grpc-graph.js';
import type { HandlerResult } from './grpc-test-service.js';

export const CATALOG_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@external", "@requires"])

  "A date-time as ISO 8601 text."
  scalar DateTime
  scalar JSON

  type Product @key(fields: "id") {
    id: ID!
    name: String!
    price: Float!
    stock: Int
    discontinued: Boolean
    tags: [String!]!
    aliases: [String!]
    sizes: [[Int!]!]!
    createdAt: DateTime!
    metadata: JSON
    kind: ProductKind!
    category: Category
    weight: Float! @external
    shippingEstimate: Float! @requires(fields: "weight")
    reviews(limit: Int!): [Review!]!
  }

  enum ProductKind {
    PHYSICAL
    DIGITAL
  }

  type Category {
    id: ID!
    name: String!
    parent: Category
  }

  type Review {
    id: ID!
    rating: Int!
    body: String
  }

  interface Node {
    id: ID!
  }

  type Author implements Node {
    id: ID!
    name: String!
  }

  type Article implements Node {
    id: ID!
    title: String!
    author: Author!
  }

  union SearchResult = Product | Article

  input ProductFilter {
    kinds: [ProductKind!]
    minPrice: Float
    nameContains: String
    tagGroups: [[String!]!]
  }

  type Query {
    product(id: ID!): Product
    products(filter: ProductFilter, first: Int = 10): [Product!]!
    node(id: ID!): Node
    search(term: String!): [SearchResult!]!
    serverTime: DateTime!
  }

  type Mutation {
    setPrice(id: ID!, price: Float!): Product!
    tagProduct(id: ID!, tags: [String!]!): Product!
  }
`;

/** Products as the service stores them: proto-shaped (wrappers, ListOf messages, prefixed enums). */
export function catalogProducts(): Record<string, Record<string, unknown>> {
  return {
    p1: {
      id: 'p1',
      name: 'Table',
      price: 899.5,
      stock: { value: 3 },
      discontinued: { value: false },
      tags: ['wood', 'dining'],
      aliases: { list: { items: ['desk'] } },
      sizes: { list: { items: [{ list: { items: [120, 80] } }, { list: { items: [] } }] } },
      created_at: '2024-01-02T03:04:05Z',
      metadata: { value: '{"origin":"oak"}' },
      kind: 'PRODUCT_KIND_PHYSICAL',
      category: { id: 'c2', name: 'Tables', parent: { id: 'c1', name: 'Furniture' } },
    },
    p2: {
      id: 'p2',
      name: 'Manual',
      price: 10,
      tags: [],
      sizes: { list: { items: [] } },
      created_at: '2024-02-03T04:05:06Z',
      kind: 'PRODUCT_KIND_DIGITAL',
    },
    p3: {
      id: 'p3',
      name: 'Lamp',
      price: 30,
      stock: { value: 0 },
      tags: ['light'],
      sizes: { list: { items: [{ list: { items: [30] } }] } },
      created_at: '2024-03-04T05:06:07Z',
      kind: 'PRODUCT_KIND_PHYSICAL',
    },
  };
}

const reviews: Record<string, Array<Record<string, unknown>>> = {
  p1: [
    { id: 'r1', rating: 5, body: { value: 'Solid.' } },
    { id: 'r2', rating: 4 },
  ],
  p3: [{ id: 'r3', rating: 2, body: { value: 'Too dim.' } }],
};

function notFound(what: string): HandlerResult {
  return { status: 5, details: `${what} not found` };
}

/** The catalog gRPC service, over a fresh copy of the products. */
export function catalogService(products = catalogProducts()): GrpcSubgraphDefinition {
  const byId = (id: unknown) => (typeof id === 'string' ? products[id] : undefined);
  return {
    name: 'catalog',
    sdl: CATALOG_SDL,
    handlers: {
      QueryProduct: (request) => ({ product: byId(request.id) }),
      QueryProducts: (request) => {
        const filter = (request.filter ?? {}) as Record<string, unknown>;
        const kinds = (filter.kinds as { list?: { items?: string[] } } | undefined)?.list?.items;
        const minPrice = (filter.min_price as { value?: number } | undefined)?.value;
        const first = (request.first as { value?: number } | undefined)?.value ?? 100;
        const list = Object.values(products)
          .filter((p) => !kinds || kinds.includes(p.kind as string))
          .filter((p) => minPrice === undefined || (p.price as number) >= minPrice)
          .slice(0, first);
        return { products: list };
      },
      QueryNode: (request) =>
        request.id === 'a1'
          ? { node: { article: { id: 'a1', title: 'Choosing a table', author: { id: 'u1', name: 'Ada' } } } }
          : request.id === 'u1'
            ? { node: { author: { id: 'u1', name: 'Ada' } } }
            : {},
      QuerySearch: (request) => ({
        search: [{ product: products.p1 }, { article: { id: 'a1', title: `About ${String(request.term)}`, author: { id: 'u1', name: 'Ada' } } }],
      }),
      QueryServerTime: () => ({ server_time: '2025-06-01T12:00:00Z' }),
      MutationSetPrice: (request) => {
        const product = byId(request.id);
        if (!product) return notFound(`product ${String(request.id)}`);
        product.price = request.price;
        return { set_price: product };
      },
      MutationTagProduct: (request) => {
        const product = byId(request.id);
        if (!product) return notFound(`product ${String(request.id)}`);
        product.tags = [...(product.tags as string[]), ...(request.tags as string[])];
        return { tag_product: product };
      },
      LookupProductById: (request) => ({
        result: (request.keys as Array<{ id: string }>).map((key) => products[key.id] ?? {}),
      }),
      RequireProductShippingEstimateById: (request) => ({
        result: (request.context as Array<{ fields: { weight?: number } }>).map(({ fields }) => ({ shipping_estimate: (fields.weight ?? 0) * 0.5 })),
      }),
      ResolveProductReviews: (request) => {
        const limit = (request.field_args as { limit?: number } | undefined)?.limit ?? 0;
        return {
          result: (request.context as Array<{ id: string }>).map((context) => ({ reviews: (reviews[context.id] ?? []).slice(0, limit) })),
        };
      },
    },
  };
}

const inventoryData: Record<string, { inStock: boolean; weight: number }> = {
  p1: { inStock: true, weight: 40 },
  p2: { inStock: true, weight: 0 },
  p3: { inStock: false, weight: 2 },
};

/** The inventory HTTP subgraph: stock and weight of catalog products. */
export const inventorySubgraph: SubgraphOptions = {
  name: 'inventory',
  typeDefs: /* GraphQL */ `
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
    type Product @key(fields: "id") {
      id: ID!
      inStock: Boolean!
      weight: Float!
    }
    type Query {
      warehouse: [Product!]!
      featured: [Product!]!
    }
  `,
  resolvers: {
    Query: {
      warehouse: () => Object.keys(inventoryData).map((id) => ({ id, ...inventoryData[id] })),
      featured: () => [{ id: 'p3', ...inventoryData.p3 }],
    },
    Product: { __resolveReference: (reference: { id: string }) => ({ id: reference.id, ...inventoryData[reference.id] }) },
  },
};
