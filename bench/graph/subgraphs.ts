/**
 * The benchmark's four subgraphs (accounts, products, inventory, reviews):
 * Federation v2 SDL plus resolvers over `data.ts`. Entity jumps: Product
 * (products -> reviews, inventory), User (reviews -> accounts), and
 * `Product.shippingEstimate` `@requires(fields: "price weight")`.
 */
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { firstUsers, inStock, productByUpcOrNull, reviewsByUser, reviewsOfProduct, shippingEstimate, topProducts, userByIdOrNull, type Review } from './data.js';

/** One benchmark subgraph. */
export interface BenchSubgraph {
  /** Subgraph name, as in the supergraph's `join__Graph`. */
  readonly name: string;
  /** Federation v2 SDL. */
  readonly sdl: string;
  readonly resolvers: GraphQLResolverMap<unknown>;
}

/** The `@link` line of a Federation v2.3 subgraph importing `imports` (directive names without `@`). */
export function federationLink(imports: readonly string[]): string {
  return `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: [${imports.map((i) => `"@${i}"`).join(', ')}])`;
}

const link = federationLink;

const accounts: BenchSubgraph = {
  name: 'accounts',
  sdl: /* GraphQL */ `
    ${link(['key'])}
    type Query {
      user(id: ID!): User
      users(first: Int! = 20): [User!]!
    }
    type User @key(fields: "id") {
      id: ID!
      name: String!
      username: String!
    }
  `,
  resolvers: {
    Query: {
      user: (_: unknown, args: { id: string }) => userByIdOrNull(args.id),
      users: (_: unknown, args: { first: number }) => firstUsers(args.first),
    },
    User: { __resolveReference: (ref: { id: string }) => userByIdOrNull(ref.id) },
  },
};

const products: BenchSubgraph = {
  name: 'products',
  sdl: /* GraphQL */ `
    ${link(['key'])}
    type Query {
      topProducts(first: Int! = 5): [Product!]!
      product(upc: String!): Product
    }
    type Product @key(fields: "upc") {
      upc: String!
      name: String!
      price: Int!
      weight: Int!
    }
  `,
  resolvers: {
    Query: {
      topProducts: (_: unknown, args: { first: number }) => topProducts(args.first),
      product: (_: unknown, args: { upc: string }) => productByUpcOrNull(args.upc),
    },
    Product: { __resolveReference: (ref: { upc: string }) => productByUpcOrNull(ref.upc) },
  },
};

interface InventoryReference {
  upc: string;
  price?: unknown;
  weight?: unknown;
}

const inventory: BenchSubgraph = {
  name: 'inventory',
  sdl: /* GraphQL */ `
    ${link(['key', 'external', 'requires'])}
    type Product @key(fields: "upc") {
      upc: String!
      price: Int! @external
      weight: Int! @external
      inStock: Boolean!
      shippingEstimate: Int! @requires(fields: "price weight")
    }
  `,
  resolvers: {
    Product: {
      __resolveReference: (ref: InventoryReference) => ref,
      inStock: (product: InventoryReference) => inStock(product.upc),
      shippingEstimate: (product: InventoryReference) => shippingEstimate(product.price, product.weight),
    },
  },
};

const reviews: BenchSubgraph = {
  name: 'reviews',
  sdl: /* GraphQL */ `
    ${link(['key'])}
    type Review @key(fields: "id") {
      id: ID!
      body: String!
      author: User!
      product: Product!
    }
    type User @key(fields: "id") {
      id: ID!
      reviews: [Review!]!
    }
    type Product @key(fields: "upc") {
      upc: String!
      reviews: [Review!]!
    }
  `,
  resolvers: {
    Review: {
      author: (review: Review) => ({ id: review.authorId }),
      product: (review: Review) => ({ upc: review.productUpc }),
    },
    User: {
      __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
      reviews: (user: { id: string }) => reviewsByUser(user.id),
    },
    Product: {
      __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
      reviews: (product: { upc: string }) => reviewsOfProduct(product.upc),
    },
  },
};

/** The subgraphs, in the order they are started and composed. */
export const benchSubgraphs: readonly BenchSubgraph[] = [accounts, products, inventory, reviews];
