/**
 * Real subgraphs for subscription tests: `reviews` streams `reviewAdded`
 * events the test pushes, over GraphQL over WebSocket (a graphql-ws server)
 * and over Server-Sent Events (graphql-yoga, GET and POST) on the same
 * `/graphql`; `products` resolves the events' `Product` entities over HTTP.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse, type GraphQLSchema } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { createClient, type Client, type ClientOptions, type SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { composeSubgraphs } from '../../src/compose/compose.js';
import type { SubscriptionSettings } from '../../src/kernel/graph/execution-config.js';
import type { CoreConfigInput } from '../../src/kernel/config/core-schema.js';
import { createLogger } from '../../src/kernel/logger.js';
import type { SwitchyardPlugin } from '../../src/kernel/pipeline/plugin.js';
import { createRouter, type Router } from '../../src/kernel/router/router.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { startWebSocketServer } from '../support/loopback-server.js';

export const REVIEWS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { reviewCount: Int }
  type Subscription { reviewAdded(upc: ID): Review! }
  type Review { id: ID! body: String! product: Product! }
  type Product @key(fields: "upc") { upc: ID! }
`;

export const PRODUCTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { product(upc: ID!): Product }
  type Product @key(fields: "upc") { upc: ID! name: String! price: Int }
`;

export const SUBSCRIPTION = 'subscription { reviewAdded { id body product { upc name price } } }';
/** The same selection for the reviews of p1 only: another subgraph operation, so another upstream subscription (no deduplication). */
export const SUBSCRIPTION_P1 = 'subscription { reviewAdded(upc: "p1") { id body product { upc name price } } }';

const PRODUCTS = new Map([
  ['p1', { upc: 'p1', name: 'Table', price: 100 }],
  ['p2', { upc: 'p2', name: 'Chair', price: 50 }],
]);

export type ReviewEvent = { id: string; body: string; upc: string } | { fail: string } | 'end';

export interface ReviewsSubgraph {
  readonly name: string;
  readonly typeDefs: string;
  /** `http://127.0.0.1:<port>/graphql` */
  readonly url: string;
  /** Subscriptions open on the subgraph now. */
  readonly open: () => number;
  /** Request headers of each subscription request (WebSocket upgrade or SSE), and the method it came with. */
  readonly requests: Array<{ method: string; protocol: 'ws' | 'sse'; headers: Record<string, unknown> }>;
  push(event: ReviewEvent): void;
  close(): Promise<void>;
}

/** The reviews subgraph as the router sees it: its name, its SDL and `url`. */
export function reviewsAt(url: string): Pick<ReviewsSubgraph, 'name' | 'typeDefs' | 'url'> {
  return { name: 'reviews', typeDefs: REVIEWS_SDL, url };
}

/** The reviews subgraph's schema, whose subscriptions stream what `push` sends. */
export function createReviewsSchema(): { schema: GraphQLSchema; push: (event: ReviewEvent) => void; open: () => number } {
  const listeners = new Set<(event: ReviewEvent) => void>();
  let open = 0;
  const schema = buildSubgraphSchema({
    typeDefs: parse(REVIEWS_SDL),
    resolvers: {
      Subscription: {
        reviewAdded: {
          // An explicit iterator: its return() ends the subscription at once (a generator waiting for an event would not).
          subscribe: (_: unknown, args: { upc?: string }): AsyncIterableIterator<unknown> => {
            const queue: ReviewEvent[] = [];
            let wake: (() => void) | undefined;
            let ended = false;
            const listener = (event: ReviewEvent): void => {
              queue.push(event);
              wake?.();
            };
            const end = (): void => {
              if (ended) return;
              ended = true;
              listeners.delete(listener);
              open--;
              wake?.();
            };
            listeners.add(listener);
            open++;
            const done = { done: true as const, value: undefined };
            return {
              async next() {
                for (;;) {
                  if (ended) return done;
                  if (queue.length === 0) {
                    await new Promise<void>((resolve) => (wake = resolve));
                    continue;
                  }
                  const event = queue.shift()!;
                  if (event === 'end') {
                    end();
                    return done;
                  }
                  if ('fail' in event) {
                    end();
                    throw new Error(event.fail);
                  }
                  if (args.upc && event.upc !== args.upc) continue;
                  return { done: false, value: { reviewAdded: { id: event.id, body: event.body, product: { __typename: 'Product', upc: event.upc } } } };
                }
              },
              async return() {
                end();
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
  return {
    schema,
    open: () => open,
    push: (event) => {
      for (const listener of [...listeners]) listener(event);
    },
  };
}

export async function startReviews(): Promise<ReviewsSubgraph> {
  const { schema, push, open } = createReviewsSchema();
  const requests: ReviewsSubgraph['requests'] = [];
  // graphql-yoga serves GraphQL over SSE (GET and POST, `Accept: text/event-stream`) as subgraphs run it.
  const yoga = createYoga({ schema, logging: false, graphiql: false, maskedErrors: false });
  const ws = await startWebSocketServer({
    onRequest: (req, res) => {
      if (String(req.headers.accept ?? '').includes('text/event-stream')) requests.push({ method: req.method ?? '', protocol: 'sse', headers: { ...req.headers } });
      void yoga.requestListener(req, res);
    },
  });
  ws.wss.on('connection', (_socket, req) => requests.push({ method: 'GET', protocol: 'ws', headers: { ...req.headers } }));
  const disposable = useServer({ schema }, ws.wss);
  return {
    ...reviewsAt(ws.url),
    open,
    requests,
    push,
    async close() {
      await disposable.dispose();
      await ws.close();
    },
  };
}

export async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const cleanups: Array<() => Promise<void> | void> = [];

/**
 * Runs after the current test (in reverse order of registration). The hook is
 * registered on the test itself, not at module level, so the fixtures work in
 * worker processes that run several files (the test line's --no-isolate).
 */
export function onCleanup(cleanup: () => Promise<void> | void): void {
  if (cleanups.length === 0) {
    onTestFinished(async () => {
      for (const registered of cleanups.splice(0).reverse()) await registered();
    });
  }
  cleanups.push(cleanup);
}

export interface SubscriptionSetup {
  readonly reviews: ReviewsSubgraph;
  readonly products: TestSubgraph;
  readonly router: Router;
  /** `http://127.0.0.1:<port>` of the router. */
  readonly url: string;
}

/** The products subgraph over HTTP: the events' `Product` entities (p1, p2). */
export function startProducts(): Promise<TestSubgraph> {
  return startSubgraph({
    name: 'products',
    typeDefs: PRODUCTS_SDL,
    resolvers: {
      Query: { product: (_: unknown, { upc }: { upc: string }) => PRODUCTS.get(upc) ?? null },
      Product: { __resolveReference: (ref: { upc: string }) => PRODUCTS.get(ref.upc) ?? null },
    } as never,
  });
}

/** The two subgraphs and a listening router over them; `subscription` is reviews' compose-file section. */
export async function setupSubscriptions(
  options: {
    config?: Omit<CoreConfigInput, 'version'>;
    plugins?: SwitchyardPlugin[];
    subscription?: (reviewsUrl: string) => SubscriptionSettings;
    /** Starts the reviews subgraph; default `startReviews` (graphql-ws and SSE). */
    reviews?: () => Promise<ReviewsSubgraph>;
  } = {},
): Promise<SubscriptionSetup> {
  const reviews = await (options.reviews ?? startReviews)();
  onCleanup(() => reviews.close());
  const products = await startProducts();
  onCleanup(() => products.close());
  const subscription = options.subscription?.(reviews.url);
  const composed = composeSubgraphs([
    { name: reviews.name, url: reviews.url, sdl: reviews.typeDefs, ...(subscription ? { subscription } : {}) },
    { name: products.name, url: products.url, sdl: products.typeDefs },
  ]);
  const router = await createRouter({
    config: { ...options.config, execution_config: { file: { watch: false } } },
    plugins: options.plugins,
    graph: { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' },
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
  });
  onCleanup(() => router.close());
  const { url } = await router.listen('127.0.0.1:0');
  return { reviews, products, router, url };
}

/** What a graphql-ws client received for one operation. */
export interface Collected {
  readonly events: unknown[];
  readonly error: unknown;
  readonly completed: boolean;
  dispose(): void;
  /** Resolves once `check()` holds, checked on each arrival (and every 20 ms); fails after `timeoutMs` with what arrived. */
  until(check: () => boolean, timeoutMs?: number): Promise<void>;
}

/** Subscribes with a graphql-ws client and collects what arrives. */
export function collect(client: Client, payload: SubscribePayload): Collected {
  const events: unknown[] = [];
  let error: unknown;
  let completed = false;
  const waiters: Array<() => void> = [];
  const poke = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const dispose = client.subscribe(payload, {
    next: (value) => {
      events.push(value);
      poke();
    },
    error: (e) => {
      error = e;
      poke();
    },
    complete: () => {
      completed = true;
      poke();
    },
  });
  return {
    events,
    get error() {
      return error;
    },
    get completed() {
      return completed;
    },
    dispose,
    async until(check, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out; events: ${JSON.stringify(events)}, error: ${JSON.stringify(error)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 20);
        });
      }
    },
  };
}

/** A graphql-ws client of the router, disposed after the test. */
export function wsClient(setup: SubscriptionSetup, options: Partial<ClientOptions> = {}): Client {
  const client = createClient({ url: `${setup.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, ...options });
  onCleanup(() => client.dispose());
  return client;
}
