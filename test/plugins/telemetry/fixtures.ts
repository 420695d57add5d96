/**
 * Three subgraphs one operation crosses in sequence: products (root field),
 * reviews (entity fetch on Product), users (entity fetch on User).
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';

const products = [
  { upc: 'p1', name: 'Table' },
  { upc: 'p2', name: 'Couch' },
];
const reviews = [
  { id: 'r1', upc: 'p1', body: 'Solid', authorId: 'u1' },
  { id: 'r2', upc: 'p2', body: 'Comfy', authorId: 'u2' },
];
const users = new Map([
  ['u1', { id: 'u1', username: 'ada' }],
  ['u2', { id: 'u2', username: 'grace' }],
]);

export function productsSubgraph(overrides: Partial<SubgraphOptions> = {}): SubgraphOptions {
  return {
    name: 'products',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        topProducts: [Product!]!
      }
      type Product @key(fields: "upc") {
        upc: ID!
        name: String
      }
    `,
    resolvers: {
      Query: { topProducts: () => products },
      Product: { __resolveReference: (ref: { upc: string }) => products.find((p) => p.upc === ref.upc) ?? null },
    },
    ...overrides,
  };
}

export function reviewsSubgraph(overrides: Partial<SubgraphOptions> = {}): SubgraphOptions {
  return {
    name: 'reviews',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Product @key(fields: "upc") {
        upc: ID!
        reviews: [Review!]!
      }
      type Review {
        id: ID!
        body: String
        author: User
      }
      type User @key(fields: "id") {
        id: ID!
      }
    `,
    resolvers: {
      Product: {
        __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
        reviews: (product: { upc: string }) => reviews.filter((r) => r.upc === product.upc),
      },
      Review: { author: (review: { authorId: string }) => ({ id: review.authorId }) },
    },
    ...overrides,
  };
}

export function usersSubgraph(overrides: Partial<SubgraphOptions> = {}): SubgraphOptions {
  return {
    name: 'users',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type User @key(fields: "id") {
        id: ID!
        username: String
      }
    `,
    resolvers: {
      User: { __resolveReference: (ref: { id: string }) => users.get(ref.id) ?? null },
    },
    ...overrides,
  };
}

/** Crosses products -> reviews -> users. */
export const TOP_PRODUCTS = /* GraphQL */ `
  query TopProducts {
    topProducts {
      upc
      name
      reviews {
        body
        author {
          username
        }
      }
    }
  }
`;

export const TOP_PRODUCTS_DATA = {
  topProducts: [
    { upc: 'p1', name: 'Table', reviews: [{ body: 'Solid', author: { username: 'ada' } }] },
    { upc: 'p2', name: 'Couch', reviews: [{ body: 'Comfy', author: { username: 'grace' } }] },
  ],
};
