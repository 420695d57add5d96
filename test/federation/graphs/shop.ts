/**
 * A shop, a graph built around child type mismatches: `Book.code` is non-null
 * in `store` and nullable in `labels`, so the supergraph has it nullable, like
 * `Game.code`; sibling fragments selecting `code` on both are valid for
 * clients but not as such for `store`. `Book.shelf` returns an object that is
 * a value type in one subgraph and has more fields in the other.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const PRODUCTS = [
  { __typename: 'Book', id: 'bk1', code: 'ISBN-1', title: 'Dune', shelf: { row: 3, label: 'Sci-fi' } },
  { __typename: 'Game', id: 'gm1', code: null, title: 'Go', players: 2 },
];

export function storeSubgraph(): SubgraphOptions {
  return {
    name: 'store',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { products: [Product!]! }
      union Product = Book | Game
      type Book @key(fields: "id") { id: ID! code: String! @shareable title: String! shelf: Shelf! @shareable }
      type Game @key(fields: "id") { id: ID! code: String title: String! players: Int! }
      type Shelf @shareable { row: Int! }
    `,
    resolvers: {
      Query: { products: () => PRODUCTS },
      Product: { __resolveType: (p: { __typename: string }) => p.__typename },
      Book: { __resolveReference: (ref: { id: string }) => PRODUCTS.find((p) => p.id === ref.id) ?? null },
    },
  };
}

export function labelsSubgraph(): SubgraphOptions {
  return {
    name: 'labels',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { bestseller: Book }
      type Book @key(fields: "id") { id: ID! code: String @shareable shelf: Shelf @shareable }
      type Shelf @shareable { row: Int label: String }
    `,
    resolvers: {
      Query: { bestseller: () => ({ id: 'bk1', code: 'ISBN-1', shelf: { row: 3, label: 'Sci-fi' } }) },
      Book: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, code: 'ISBN-1', shelf: { row: 3, label: 'Sci-fi' } }) },
    },
  };
}

export function shopGraph(): SubgraphOptions[] {
  return [storeSubgraph(), labelsSubgraph()];
}
