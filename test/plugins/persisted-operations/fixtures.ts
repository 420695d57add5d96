/** A one-subgraph graph, operations against it, and a log collector for the persisted-operations tests. */
import { createLogger, type Logger } from '../../../src/index.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';

const products = [
  { upc: 'p1', name: 'Table', price: 899 },
  { upc: 'p2', name: 'Couch', price: 1299 },
];

/** Starts the `products` subgraph. */
export function startProducts(): Promise<TestSubgraph> {
  return startSubgraph({
    name: 'products',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Product @key(fields: "upc") {
        upc: ID!
        name: String!
        price: Int!
      }
      type Query {
        topProducts: [Product!]!
        product(upc: ID!): Product
      }
    `,
    resolvers: {
      Query: {
        topProducts: () => products,
        product: (_: unknown, { upc }: { upc: string }) => products.find((product) => product.upc === upc) ?? null,
      },
    },
  });
}

export const topProducts = 'query TopProducts { topProducts { upc name } }';
export const topProductsData = {
  topProducts: [
    { upc: 'p1', name: 'Table' },
    { upc: 'p2', name: 'Couch' },
  ],
};
export const productByUpc = 'query Product($upc: ID!) { product(upc: $upc) { upc name price } }';
export const prices = 'query Prices { topProducts { price } }';

/** One JSON log line. */
export type LogLine = Record<string, unknown> & { msg: string; level: string };

/** A logger that keeps its lines. */
export function collectingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } });
  return { logger, lines };
}

/** `extensions` of a persisted-query request. */
export function byHash(sha256Hash: string): { persistedQuery: { version: 1; sha256Hash: string } } {
  return { persistedQuery: { version: 1, sha256Hash } };
}

/** POSTs a raw JSON body to the router's /graphql and parses the answer. */
export async function postJson(router: { fetch(path: string, init?: RequestInit): Promise<Response> }, body: unknown, headers: Record<string, string> = {}) {
  const response = await router.fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}
