/**
 * The example's subgraphs: `catalog` answers root fields and tags them
 * `catalog`; `inventory` answers `Product` entities and tags each one
 * `product:<upc>`. Both send Cache-Control, which decides what the router
 * caches and for how long.
 */
import type { SubgraphCall, SubgraphOptions } from '../../src/testing/index.js';

const link = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`;

const products = [
  { upc: 'p1', name: 'Table', price: 899 },
  { upc: 'p2', name: 'Couch', price: 1299 },
  { upc: 'p3', name: 'Chair', price: 54 },
];

/** Stock per product; `restock` changes it (mutations are never cached). */
const stock = new Map([
  ['p1', 10],
  ['p2', 0],
  ['p3', 4],
]);

export const catalog: SubgraphOptions = {
  name: 'catalog',
  typeDefs: /* GraphQL */ `
    ${link}
    type Query {
      products: [Product!]!
      product(upc: ID!): Product
    }
    type Product @key(fields: "upc") {
      upc: ID!
      name: String!
      price: Int!
    }
  `,
  resolvers: {
    Query: {
      products: () => products,
      product: (_: unknown, args: { upc: string }) => products.find((p) => p.upc === args.upc) ?? null,
    },
    Product: { __resolveReference: (ref: { upc: string }) => products.find((p) => p.upc === ref.upc) ?? null },
  },
  reply: () => ({ headers: { 'cache-control': 'public, max-age=60' }, extensions: { cacheTags: ['catalog'] } }),
};

export const inventory: SubgraphOptions = {
  name: 'inventory',
  typeDefs: /* GraphQL */ `
    ${link}
    type Product @key(fields: "upc") {
      upc: ID!
      quantity: Int!
      inStock: Boolean!
    }
    type Mutation {
      restock(upc: ID!, quantity: Int!): Product
    }
  `,
  resolvers: {
    Product: {
      __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
      quantity: (product: { upc: string }) => stock.get(product.upc) ?? 0,
      inStock: (product: { upc: string }) => (stock.get(product.upc) ?? 0) > 0,
    },
    Mutation: {
      restock: (_: unknown, args: { upc: string; quantity: number }) => {
        stock.set(args.upc, args.quantity);
        return { upc: args.upc };
      },
    },
  },
  reply: (call: SubgraphCall) => {
    const representations = Array.isArray(call.variables.representations) ? (call.variables.representations as Array<{ upc?: unknown }>) : [];
    return {
      headers: { 'cache-control': 'public, max-age=30' },
      extensions: { entityCacheTags: representations.map((r) => [`product:${String(r.upc)}`]) },
    };
  },
};
