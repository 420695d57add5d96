/**
 * The subscription benchmark's subgraphs, in the bench process: `reviews`
 * streams `reviewAdded` over GraphQL over WebSocket (graphql-ws) and over
 * SSE (graphql-yoga) on one `/graphql`; each event carries the time it was
 * emitted and a `Product` reference that `products` (HTTP) resolves, so
 * every delivered event needs one entity fetch.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';

export const REVIEWS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { reviewCount: Int }
  type Subscription { reviewAdded: Review! }
  type Review { id: ID! emittedAt: Float! product: Product! }
  type Product @key(fields: "upc") { upc: ID! }
`;

export const PRODUCTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { product(upc: ID!): Product }
  type Product @key(fields: "upc") { upc: ID! name: String! price: Int }
`;

export interface BenchSubgraphs {
  readonly reviewsUrl: string;
  readonly productsUrl: string;
  /** Subscriptions open on reviews now. */
  readonly open: () => number;
  /** Emits one event to every open subscription; `emittedAt` is `performance.timeOrigin + performance.now()`. */
  emit(id: string): void;
  close(): Promise<void>;
}

/** A clock shared by the subgraph and the clients (both live in the bench process). */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

export async function startBenchSubgraphs(): Promise<BenchSubgraphs> {
  const listeners = new Set<(event: unknown) => void>();
  const schema = buildSubgraphSchema({
    typeDefs: parse(REVIEWS_SDL),
    resolvers: {
      Subscription: {
        reviewAdded: {
          subscribe: (): AsyncIterableIterator<unknown> => {
            const queue: unknown[] = [];
            let wake: (() => void) | undefined;
            let ended = false;
            const listener = (event: unknown): void => {
              queue.push(event);
              wake?.();
            };
            listeners.add(listener);
            const done = { done: true as const, value: undefined };
            return {
              async next() {
                while (!ended && queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
                if (ended) return done;
                return { done: false, value: queue.shift() };
              },
              async return() {
                ended = true;
                listeners.delete(listener);
                wake?.();
                return done;
              },
              [Symbol.asyncIterator]() {
                return this;
              },
            };
          },
        },
      },
    } as never,
  });
  const yoga = createYoga({ schema, logging: false, graphiql: false });
  const reviews = createServer((req, res) => void yoga.requestListener(req, res));
  const wss = new WebSocketServer({ server: reviews, path: '/graphql' });
  const disposable = useServer({ schema }, wss);

  const productSchema = buildSubgraphSchema({
    typeDefs: parse(PRODUCTS_SDL),
    resolvers: {
      Query: { product: (_: unknown, { upc }: { upc: string }) => ({ upc, name: `Product ${upc}`, price: 10 }) },
      Product: { __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc, name: `Product ${ref.upc}`, price: 10 }) },
    } as never,
  });
  const productsYoga = createYoga({ schema: productSchema, logging: false, graphiql: false });
  const products = createServer((req, res) => void productsYoga.requestListener(req, res));

  const [reviewsUrl, productsUrl] = [await listen(reviews), await listen(products)];
  return {
    reviewsUrl,
    productsUrl,
    open: () => listeners.size,
    emit(id) {
      const event = { reviewAdded: { id, emittedAt: now(), product: { __typename: 'Product', upc: 'p1' } } };
      for (const listener of [...listeners]) listener(event);
    },
    async close() {
      await disposable.dispose();
      for (const server of [reviews, products]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
