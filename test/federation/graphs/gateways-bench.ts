/**
 * The shape of the public graphql-gateways-benchmark: `accounts` (users),
 * `products` (top products), `reviews` (reviews of users and products) and
 * `inventory` (stock, and a shipping estimate that `@requires` the price and
 * weight). Entity jumps: User (accounts <-> reviews), Product (products <->
 * reviews, products -> inventory).
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const USERS = [
  { id: '1', name: 'Ada Lovelace', username: '@ada' },
  { id: '2', name: 'Alan Turing', username: '@complete' },
  { id: '3', name: 'Grace Hopper', username: '@grace' },
];
const PRODUCTS = [
  { upc: '1', name: 'Table', price: 899, weight: 100 },
  { upc: '2', name: 'Couch', price: 1299, weight: 1000 },
  { upc: '3', name: 'Chair', price: 54, weight: 50 },
  { upc: '4', name: 'Lamp', price: 20, weight: 3 },
];
const REVIEWS = [
  { id: '1', authorId: '1', productUpc: '1', body: 'Love it!' },
  { id: '2', authorId: '1', productUpc: '2', body: 'Too expensive.' },
  { id: '3', authorId: '2', productUpc: '3', body: 'Could be better.' },
  { id: '4', authorId: '3', productUpc: '1', body: 'Prefer something else.' },
  { id: '5', authorId: '2', productUpc: '4', body: 'Bright.' },
  { id: '6', authorId: '3', productUpc: '3', body: 'Sturdy.' },
];
const IN_STOCK = new Set(['1', '3']);

const userById = (id: string) => USERS.find((u) => u.id === id) ?? null;
const productByUpc = (upc: string) => PRODUCTS.find((p) => p.upc === upc) ?? null;

export function gatewaysAccountsSubgraph(): SubgraphOptions {
  return {
    name: 'accounts',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { me: User users: [User] user(id: ID!): User }
      type User @key(fields: "id") { id: ID! name: String username: String }
    `,
    resolvers: {
      Query: { me: () => USERS[0], users: () => USERS, user: (_: unknown, { id }: { id: string }) => userById(id) },
      User: { __resolveReference: (ref: { id: string }) => userById(ref.id) },
    },
  };
}

export function gatewaysProductsSubgraph(): SubgraphOptions {
  return {
    name: 'products',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { topProducts(first: Int = 5): [Product] }
      type Product @key(fields: "upc") { upc: String! name: String price: Int weight: Int title(lang: String = "en"): String }
    `,
    resolvers: {
      Query: { topProducts: (_: unknown, { first }: { first: number }) => PRODUCTS.slice(0, first) },
      Product: {
        __resolveReference: (ref: { upc: string }) => productByUpc(ref.upc),
        title: (product: { name: string }, { lang }: { lang: string }) => `${product.name} (${lang})`,
      },
    },
  };
}

export function gatewaysInventorySubgraph(): SubgraphOptions {
  return {
    name: 'inventory',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'external', 'requires')}
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
        __resolveReference: (ref: { upc: string; price?: number; weight?: number }) => ref,
        inStock: (product: { upc: string }) => IN_STOCK.has(product.upc),
        // Free for expensive items, else an estimate from the weight.
        shippingEstimate: (product: { price?: number; weight?: number }) =>
          product.price === undefined || product.weight === undefined ? null : product.price > 1000 ? 0 : Math.round(product.weight * 0.5),
      },
    },
  };
}

export function gatewaysReviewsSubgraph(): SubgraphOptions {
  return {
    name: 'reviews',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'external', 'provides')}
      type Review @key(fields: "id") { id: ID! body: String author: User @provides(fields: "username") product: Product }
      type User @key(fields: "id") { id: ID! username: String @external reviews: [Review] }
      type Product @key(fields: "upc") { upc: String! reviews: [Review] }
    `,
    resolvers: {
      Review: {
        author: (review: { authorId: string }) => ({ id: review.authorId, username: userById(review.authorId)?.username }),
        product: (review: { productUpc: string }) => ({ upc: review.productUpc }),
      },
      User: {
        __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
        reviews: (user: { id: string }) => REVIEWS.filter((r) => r.authorId === user.id),
      },
      Product: {
        __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
        reviews: (product: { upc: string }) => REVIEWS.filter((r) => r.productUpc === product.upc),
      },
    },
  };
}

/** The four subgraphs. */
export function gatewaysBenchGraph(): SubgraphOptions[] {
  return [gatewaysAccountsSubgraph(), gatewaysProductsSubgraph(), gatewaysInventorySubgraph(), gatewaysReviewsSubgraph()];
}

/**
 * Two root fields, each walking reviews -> authors -> reviews -> products,
 * with the `@requires` field at the deepest products. Six subgraph calls
 * suffice: accounts and products (roots), one reviews call for both
 * branches, then accounts and products, then inventory.
 */
export const TWO_ROOT_QUERY = /* GraphQL */ `
  query TwoRoots {
    users {
      id
      username
      reviews {
        body
        product {
          upc
          reviews {
            id
            author {
              name
              reviews {
                body
                product { name inStock shippingEstimate }
              }
            }
          }
        }
      }
    }
    topProducts {
      name
      reviews {
        body
        author {
          name
          reviews {
            product { name inStock shippingEstimate }
          }
        }
      }
    }
  }
`;
