/**
 * A library, a graph mixing a Federation 1 subgraph (`reviews`: no `@link`,
 * `extend type` with `@external` keys, a nested `@provides`) with a Federation
 * 2 one (`catalogue`) that serves a `Node` interface: `node(id:)` and
 * `related` links that lead back to nodes (a circular reference).
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const NODES = [
  { __typename: 'Book', id: 'bk1', title: 'Solaris', related: ['au1', 'bk2'] },
  { __typename: 'Book', id: 'bk2', title: 'Fiasco', related: ['bk1'] },
  { __typename: 'Author', id: 'au1', name: 'Stanisław Lem' },
];
const byId = (id: string) => NODES.find((n) => n.id === id) ?? null;

export function catalogueSubgraph(): SubgraphOptions {
  return {
    name: 'catalogue',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { node(id: ID!): Node nodes: [Node!]! }
      interface Node { id: ID! }
      type Book implements Node @key(fields: "id") { id: ID! title: String! related: [Node!]! }
      type Author implements Node @key(fields: "id") { id: ID! name: String! @shareable }
    `,
    resolvers: {
      Query: { node: (_: unknown, { id }: { id: string }) => byId(id), nodes: () => NODES },
      Node: { __resolveType: (node: { __typename: string }) => node.__typename },
      Book: { __resolveReference: (ref: { id: string }) => byId(ref.id), related: (book: { related: string[] }) => book.related.map(byId) },
      Author: { __resolveReference: (ref: { id: string }) => byId(ref.id) },
    },
  };
}

/** Federation 1 SDL: no @link, entities extended with @external keys. */
export function reviewsSubgraph(): SubgraphOptions {
  const reviews = new Map([
    ['bk1', [{ stars: 5, by: { id: 'au1', name: 'Stanisław Lem' } }]],
    ['bk2', [{ stars: 3, by: null }]],
  ]);
  return {
    name: 'reviews',
    typeDefs: /* GraphQL */ `
      extend type Book @key(fields: "id") { id: ID! @external reviews: [Review!]! }
      extend type Author @key(fields: "id") { id: ID! @external name: String @external }
      type Review { stars: Int! by: Author @provides(fields: "name") }
    `,
    resolvers: {
      Book: { __resolveReference: (ref: { id: string }) => ref, reviews: (book: { id: string }) => reviews.get(book.id) ?? [] },
    },
  };
}

export function libraryGraph(): SubgraphOptions[] {
  return [catalogueSubgraph(), reviewsSubgraph()];
}
