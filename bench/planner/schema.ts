/**
 * The planner benchmark's graph: five subgraphs (accounts, products,
 * reviews, inventory, shipping) with two keys on Product (`upc`, `sku`),
 * `@requires`, `@provides`, and an entity (Warehouse) owned by one
 * subgraph and extended by another; plus one large operation (96 fields)
 * whose entity jumps pass through all of them. Only SDL: planning needs
 * no data.
 */
import { federationLink as link } from '../graph/subgraphs.js';

/** Subgraph name and SDL. */
export interface PlannerSubgraph {
  readonly name: string;
  readonly sdl: string;
}

export const plannerSubgraphs: readonly PlannerSubgraph[] = [
  {
    name: 'accounts',
    sdl: /* GraphQL */ `
      ${link(['key', 'shareable'])}
      type Query {
        me: User
        user(id: ID!): User
      }
      type User @key(fields: "id") {
        id: ID!
        name: String!
        username: String! @shareable
        email: String!
        birthDate: String!
        avatarUrl: String!
        createdAt: String!
        address: Address!
      }
      type Address {
        street: String!
        city: String!
        country: String!
        zip: String!
      }
    `,
  },
  {
    name: 'products',
    sdl: /* GraphQL */ `
      ${link(['key'])}
      type Query {
        topProducts(first: Int! = 5): [Product!]!
        product(upc: String!): Product
      }
      type Product @key(fields: "upc") @key(fields: "sku") {
        upc: String!
        sku: String!
        name: String!
        description: String!
        price: Int!
        weight: Int!
        dimensions: Dimensions!
        category: Category!
        brand: Brand!
      }
      type Dimensions {
        width: Int!
        height: Int!
        depth: Int!
      }
      type Category {
        id: ID!
        name: String!
        parent: Category
      }
      type Brand {
        id: ID!
        name: String!
        country: String!
      }
    `,
  },
  {
    name: 'reviews',
    sdl: /* GraphQL */ `
      ${link(['key', 'external', 'provides'])}
      type Review @key(fields: "id") {
        id: ID!
        body: String!
        rating: Int!
        createdAt: String!
        helpfulVotes: Int!
        author: User! @provides(fields: "username")
        product: Product!
      }
      type User @key(fields: "id") {
        id: ID!
        username: String! @external
        reviews: [Review!]!
        reviewCount: Int!
      }
      type Product @key(fields: "upc") {
        upc: String!
        reviews: [Review!]!
        averageRating: Float!
        reviewCount: Int!
      }
    `,
  },
  {
    name: 'inventory',
    sdl: /* GraphQL */ `
      ${link(['key', 'external', 'requires'])}
      type Product @key(fields: "upc") {
        upc: String!
        price: Int! @external
        weight: Int! @external
        inStock: Boolean!
        quantity: Int!
        warehouse: Warehouse!
        shippingEstimate: Int! @requires(fields: "price weight")
      }
      type Warehouse @key(fields: "id") {
        id: ID!
        name: String!
        city: String!
      }
    `,
  },
  {
    name: 'shipping',
    sdl: /* GraphQL */ `
      ${link(['key'])}
      type Warehouse @key(fields: "id") {
        id: ID!
        carriers: [Carrier!]!
      }
      type Carrier {
        name: String!
        deliveryDays: Int!
        cost: Int!
      }
      type User @key(fields: "id") {
        id: ID!
        deliveryAddressVerified: Boolean!
        preferredCarrier: Carrier
      }
      type Product @key(fields: "sku") {
        sku: String!
        deliveryOptions: [Carrier!]!
      }
    `,
  },
];

/** The large operation: 96 selected fields over all five subgraphs. */
export const PLANNER_QUERY = /* GraphQL */ `query BigOperation($first: Int!) {
  me {
    id name username email birthDate avatarUrl createdAt
    address { street city country zip }
    deliveryAddressVerified
    preferredCarrier { name deliveryDays cost }
    reviewCount
    reviews { id rating body product { upc name price inStock } }
  }
  topProducts(first: $first) {
    upc sku name description price weight
    dimensions { width height depth }
    category { id name parent { id name } }
    brand { id name country }
    inStock quantity shippingEstimate
    warehouse { id name city carriers { name deliveryDays cost } }
    deliveryOptions { name deliveryDays cost }
    averageRating reviewCount
    reviews {
      id body rating createdAt helpfulVotes
      author {
        id username name email reviewCount
        preferredCarrier { name }
        reviews {
          id rating
          product {
            upc sku name inStock shippingEstimate
            deliveryOptions { name cost }
            warehouse { name carriers { name } }
          }
        }
      }
    }
  }
}`;

export const PLANNER_OPERATION_NAME = 'BigOperation';
