/**
 * The demo's four subgraphs (accounts, products, reviews, inventory): small
 * federation v2 schemas with in-memory data, served by the testing kit.
 */
import type { SubgraphOptions } from '../../src/testing/subgraph-server.js';

const users = [
  { id: 'u1', name: 'Ada Lovelace', username: '@ada' },
  { id: 'u2', name: 'Alan Turing', username: '@alan' },
  { id: 'u3', name: 'Grace Hopper', username: '@grace' },
];

const products = [
  { upc: 'p1', name: 'Table', price: 899, weight: 100 },
  { upc: 'p2', name: 'Couch', price: 1299, weight: 1000 },
  { upc: 'p3', name: 'Chair', price: 54, weight: 50 },
  { upc: 'p4', name: 'Lamp', price: 30, weight: 5 },
];

const reviews = [
  { id: 'r1', authorId: 'u1', productUpc: 'p1', body: 'Love it!' },
  { id: 'r2', authorId: 'u1', productUpc: 'p2', body: 'Too expensive.' },
  { id: 'r3', authorId: 'u2', productUpc: 'p3', body: 'Could be better.' },
  { id: 'r4', authorId: 'u3', productUpc: 'p1', body: 'Prefer something else.' },
  { id: 'r5', authorId: 'u2', productUpc: 'p4', body: 'Bright enough.' },
];

const inventory = new Map([
  ['p1', { inStock: true }],
  ['p2', { inStock: false }],
  ['p3', { inStock: true }],
  ['p4', { inStock: true }],
]);

/** Every demo subgraph lets the router cache its answers for ten seconds (the demo runs the response cache). */
const cacheable = () => ({ headers: { 'cache-control': 'public, max-age=10' } });

const link = (imports: string[]) => `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: [${imports.map((i) => `"@${i}"`).join(', ')}])`;

export const accounts: SubgraphOptions = {
  name: 'accounts',
  reply: cacheable,
  typeDefs: /* GraphQL */ `
    ${link(['key', 'shareable'])}
    type Query {
      me: User
      user(id: ID!): User
      users: [User!]!
    }
    type User @key(fields: "id") {
      id: ID!
      name: String
      username: String @shareable
    }
  `,
  resolvers: {
    Query: {
      me: () => users[0],
      user: (_: unknown, args: { id: string }) => users.find((u) => u.id === args.id) ?? null,
      users: () => users,
    },
    User: { __resolveReference: (ref: { id: string }) => users.find((u) => u.id === ref.id) ?? null },
  },
};

export const productsSubgraph: SubgraphOptions = {
  name: 'products',
  reply: cacheable,
  typeDefs: /* GraphQL */ `
    ${link(['key', 'shareable'])}
    type Query {
      topProducts(first: Int = 5): [Product]
      product(upc: String!): Product
    }
    type Product @key(fields: "upc") {
      upc: String!
      name: String
      price: Int
      weight: Int
    }
  `,
  resolvers: {
    Query: {
      topProducts: (_: unknown, args: { first: number }) => products.slice(0, args.first),
      product: (_: unknown, args: { upc: string }) => products.find((p) => p.upc === args.upc) ?? null,
    },
    Product: { __resolveReference: (ref: { upc: string }) => products.find((p) => p.upc === ref.upc) ?? null },
  },
};

export const reviewsSubgraph: SubgraphOptions = {
  name: 'reviews',
  reply: cacheable,
  typeDefs: /* GraphQL */ `
    ${link(['key', 'external', 'provides'])}
    type Review @key(fields: "id") {
      id: ID!
      body: String
      author: User @provides(fields: "username")
      product: Product
    }
    type User @key(fields: "id") {
      id: ID!
      username: String @external
      reviews: [Review]
    }
    type Product @key(fields: "upc") {
      upc: String!
      reviews: [Review]
    }
  `,
  resolvers: {
    Review: {
      author: (review: { authorId: string }) => {
        const user = users.find((u) => u.id === review.authorId);
        return user ? { __typename: 'User', id: user.id, username: user.username } : null;
      },
      product: (review: { productUpc: string }) => ({ __typename: 'Product', upc: review.productUpc }),
    },
    User: {
      __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
      reviews: (user: { id: string }) => reviews.filter((r) => r.authorId === user.id),
    },
    Product: {
      __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
      reviews: (product: { upc: string }) => reviews.filter((r) => r.productUpc === product.upc),
    },
  },
};

export const inventorySubgraph: SubgraphOptions = {
  name: 'inventory',
  reply: cacheable,
  typeDefs: /* GraphQL */ `
    ${link(['key', 'external', 'requires'])}
    type Product @key(fields: "upc") {
      upc: String!
      weight: Int @external
      price: Int @external
      inStock: Boolean
      shippingEstimate: Int @requires(fields: "price weight")
    }
  `,
  resolvers: {
    Product: {
      __resolveReference: (ref: { upc: string; price?: number; weight?: number }) => ({
        ...ref,
        ...inventory.get(ref.upc),
      }),
      // Free for expensive items, else a share of the weight.
      shippingEstimate: (product: { price: number; weight: number }) => (product.price > 1000 ? 0 : Math.round(product.weight * 0.5)),
    },
  },
};

export const demoSubgraphs: readonly SubgraphOptions[] = [accounts, productsSubgraph, reviewsSubgraph, inventorySubgraph];
