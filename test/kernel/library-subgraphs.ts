/** Two small subgraphs for kernel tests: books (library) and their authors and ratings (people). */
import type { SubgraphOptions } from '../../src/testing/index.js';

const initialBooks = [
  { id: 'b1', title: 'Dune', authorId: 'a1' },
  { id: 'b2', title: 'Emma', authorId: 'a2' },
  { id: 'b3', title: 'Ubik', authorId: 'a3' },
];
const authors = new Map([
  ['a1', { id: 'a1', name: 'Frank Herbert' }],
  ['a2', { id: 'a2', name: 'Jane Austen' }],
  ['a3', { id: 'a3', name: 'Philip K. Dick' }],
]);
const ratings = new Map<string, number[] | null>([
  ['b1', [5, 4]],
  ['b2', [3]],
  ['b3', null],
]);

/** A library subgraph with its own copy of the books (mutations do not leak between tests). */
export function librarySubgraph(overrides: Partial<SubgraphOptions> = {}): SubgraphOptions {
  const books = initialBooks.map((b) => ({ ...b }));
  return {
    name: 'library',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        book(id: ID!): Book
        books: [Book!]!
        search(term: String!): [SearchResult!]!
        failing: String
        mustNotFail: String!
        echo(text: String!, times: Int = 1): String
      }
      type Mutation { addBook(title: String!): Book! }
      union SearchResult = Book | Author
      type Book @key(fields: "id") { id: ID! title: String author: Author }
      type Author @key(fields: "id") { id: ID! }
    `,
    resolvers: {
      Query: {
        book: (_: unknown, { id }: { id: string }) => books.find((b) => b.id === id) ?? null,
        books: () => books,
        search: (_: unknown, { term }: { term: string }) => [
          ...books.filter((b) => b.title.toLowerCase().includes(term.toLowerCase())).map((b) => ({ ...b, __typename: 'Book' })),
          ...[...authors.values()].filter((a) => a.name.toLowerCase().includes(term.toLowerCase())).map((a) => ({ id: a.id, __typename: 'Author' })),
        ],
        failing: () => {
          throw new Error('the library is closed');
        },
        mustNotFail: () => null,
        echo: (_: unknown, { text, times }: { text: string; times: number }) => text.repeat(times),
      },
      Mutation: {
        addBook: (_: unknown, { title }: { title: string }) => {
          const book = { id: `b${books.length + 1}`, title, authorId: 'a1' };
          books.push(book);
          return book;
        },
      },
      Book: {
        __resolveReference: (ref: { id: string }) => books.find((b) => b.id === ref.id) ?? null,
        author: (book: { authorId: string }) => ({ id: book.authorId }),
      },
      SearchResult: { __resolveType: (value: { __typename: string }) => value.__typename },
    },
    ...overrides,
  };
}

export function peopleSubgraph(overrides: Partial<SubgraphOptions> = {}): SubgraphOptions {
  return {
    name: 'people',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Author @key(fields: "id") { id: ID! name: String secret: String }
      type Book @key(fields: "id") { id: ID! ratings: [Int!]! }
    `,
    resolvers: {
      Author: {
        __resolveReference: (ref: { id: string }) => authors.get(ref.id) ?? null,
        secret: () => {
          throw new Error('not for you');
        },
      },
      Book: {
        __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
        ratings: (book: { id: string }) => ratings.get(book.id) ?? null,
      },
    },
    ...overrides,
  };
}
