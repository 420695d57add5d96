/**
 * A small graph for response cache tests: `products` answers root fields,
 * `reviews` answers `Product` entities. Each subgraph's Cache-Control and
 * cache tags are set per test, their data can change under the cache, and
 * both count the requests they get.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { CoreConfigInput, Logger, SwitchyardPlugin } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type SubgraphCall, type SubgraphReply, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache, type ResponseCacheOptions } from '../../../plugins/response-cache/index.js';
import { captureLogs } from '../../support/capture-logs.js';

const link = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`;

/** What a subgraph adds to its answers, changeable between requests. */
export interface ReplyShape {
  /** `Cache-Control` header value; undefined sends none. */
  cacheControl: string | undefined;
  /** Extensions per call (cache tags); undefined sends none. */
  extensions: ((call: SubgraphCall) => Record<string, unknown>) | undefined;
}

/** The graph's data; change it to see whether answers come from the cache. */
export interface GraphData {
  readonly products: Map<string, { upc: string; name: string; price: number }>;
  /** A product's reviews; `null` makes its `reviews` field fail with an error. */
  readonly reviews: Map<string, Array<{ id: string; body: string }> | null>;
}

/** The two subgraphs, their data and reply shapes. */
export interface CacheGraph {
  readonly products: TestSubgraph;
  readonly reviews: TestSubgraph;
  readonly data: GraphData;
  readonly reply: { products: ReplyShape; reviews: ReplyShape };
  /**
   * Makes `product(upc)` read its data at once but answer only when the
   * returned function is called (an answer in flight while data changes).
   */
  hold(): () => void;
  /** Starts a router over the graph with `cache-tags` and `response-cache`. */
  router(options: CacheRouterOptions): Promise<TestRouter>;
  /** Forgets recorded calls and restores the original data and reply shapes. */
  reset(): void;
  close(): Promise<void>;
}

/** Options of `CacheGraph.router`. */
export interface CacheRouterOptions {
  readonly cache: ResponseCacheOptions;
  readonly config?: Omit<CoreConfigInput, 'version'>;
  readonly logger?: Logger;
  readonly listen?: boolean;
  /** Plugins registered before the cache (their fetch hooks run first). */
  readonly before?: readonly SwitchyardPlugin[];
}

function initialData(): GraphData {
  return {
    products: new Map([
      ['p1', { upc: 'p1', name: 'Table', price: 899 }],
      ['p2', { upc: 'p2', name: 'Couch', price: 1299 }],
      ['p3', { upc: 'p3', name: 'Chair', price: 54 }],
    ]),
    reviews: new Map<string, Array<{ id: string; body: string }> | null>([
      ['p1', [{ id: 'r1', body: 'Love it!' }]],
      ['p2', [{ id: 'r2', body: 'Too expensive.' }]],
      ['p3', [{ id: 'r3', body: 'Could be better.' }]],
    ]),
  };
}

function initialReply(): ReplyShape {
  return { cacheControl: 'max-age=60', extensions: undefined };
}

/** Starts both subgraphs. */
export async function startCacheGraph(): Promise<CacheGraph> {
  let data = initialData();
  let gate: Promise<void> | undefined;
  const reply = { products: initialReply(), reviews: initialReply() };
  const shape = (current: ReplyShape, call: SubgraphCall): SubgraphReply => ({
    headers: current.cacheControl === undefined ? {} : { 'cache-control': current.cacheControl },
    ...(current.extensions ? { extensions: current.extensions(call) } : {}),
  });
  const products = await startSubgraph({
    name: 'products',
    typeDefs: /* GraphQL */ `
      ${link}
      type Query {
        product(upc: ID!): Product
        products(first: Int = 10): [Product!]!
        failing: Product
      }
      type Mutation {
        rename(upc: ID!, name: String!): Product
      }
      type Product @key(fields: "upc") {
        upc: ID!
        name: String
        price: Int
      }
    `,
    resolvers: {
      Query: {
        product: async (_: unknown, args: { upc: string }) => {
          const found = data.products.get(args.upc);
          const snapshot = found ? { ...found } : null;
          await gate;
          return snapshot;
        },
        products: (_: unknown, args: { first: number }) => [...data.products.values()].slice(0, args.first),
        failing: () => {
          throw new Error('products are down');
        },
      },
      Mutation: {
        rename: (_: unknown, args: { upc: string; name: string }) => {
          const product = data.products.get(args.upc);
          if (product) product.name = args.name;
          return product ?? null;
        },
      },
      Product: { __resolveReference: (ref: { upc: string }) => data.products.get(ref.upc) ?? null },
    },
    reply: (call) => shape(reply.products, call),
  });
  const reviews = await startSubgraph({
    name: 'reviews',
    typeDefs: /* GraphQL */ `
      ${link}
      type Product @key(fields: "upc") {
        upc: ID!
        reviews: [Review!]
        reviewCount: Int
      }
      type Review {
        id: ID!
        body: String
      }
    `,
    resolvers: {
      Product: {
        __resolveReference: (ref: { upc: string }) => (ref.upc === 'missing' ? null : { upc: ref.upc }),
        reviews: (product: { upc: string }) => {
          const list = data.reviews.get(product.upc);
          if (list === null) throw new Error(`reviews of ${product.upc} are unavailable`);
          return list ?? [];
        },
        reviewCount: (product: { upc: string }) => data.reviews.get(product.upc)?.length ?? 0,
      },
    },
    reply: (call) => shape(reply.reviews, call),
  });
  return {
    products,
    reviews,
    get data() {
      return data;
    },
    reply,
    hold() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    router: async ({ cache, config, logger, listen, before = [] }) =>
      startTestRouter({
        subgraphs: [products, reviews],
        plugins: [...before, useCacheTags(), useResponseCache(cache)],
        config,
        logger,
        listen,
      }),
    reset() {
      gate = undefined;
      products.reset();
      reviews.reset();
      data = initialData();
      Object.assign(reply.products, initialReply());
      Object.assign(reply.reviews, initialReply());
    },
    async close() {
      await Promise.all([products.close(), reviews.close()]);
    },
  };
}

/**
 * Starts the graph before the tests of the file (or describe block) that
 * calls it, resets it before each test and closes it after them all.
 */
export function useCacheGraph(started: (graph: CacheGraph) => void): void {
  let graph: CacheGraph | undefined;
  beforeAll(async () => {
    graph = await startCacheGraph();
    started(graph);
  });
  beforeEach(() => graph?.reset());
  afterAll(async () => {
    await graph?.close();
  });
}

/** The memory cache with a key for the endpoint, as most tests use it. */
export const memoryCache = { enabled: true, storage: { provider: 'memory' } } as const satisfies ResponseCacheOptions;

/** A shared key long enough for the endpoint. */
export const SHARED_KEY = 'test-shared-key-0123456789abcdef-0123';

/** A logger that keeps every line it writes, parsed (debug and up unless `level` says otherwise). */
export const capturingLogger = captureLogs;

/** A router with the invalidation endpoint on, its log lines, and a client of that endpoint. */
export interface InvalidatingRouter {
  readonly router: TestRouter;
  /** Every line it logged (level info and above). */
  readonly lines: Array<Record<string, unknown>>;
  /** The endpoint's URL, read from its "Invalidation endpoint listening" line. */
  readonly endpoint: string;
  /** POSTs `elements` with the shared key; the status and JSON body. */
  invalidate(elements: unknown): Promise<{ status: number; body: unknown }>;
}

/** Starts a router (given a logger to use) whose cache has the invalidation endpoint on `127.0.0.1:0` with SHARED_KEY. */
export async function startWithInvalidationEndpoint(start: (logger: Logger) => Promise<TestRouter>): Promise<InvalidatingRouter> {
  const { logger, lines } = capturingLogger('info');
  const router = await start(logger);
  const listening = lines.find((line) => line.msg === 'Invalidation endpoint listening');
  if (!listening) throw new Error('the router logged no "Invalidation endpoint listening" line');
  const endpoint = `http://${String(listening.listen_addr)}${String(listening.path)}`;
  return {
    router,
    lines,
    endpoint,
    async invalidate(elements) {
      const response = await fetch(endpoint, { method: 'POST', headers: { authorization: SHARED_KEY, 'content-type': 'application/json' }, body: JSON.stringify(elements) });
      return { status: response.status, body: await response.json() };
    },
  };
}

/** The endpoint settings every such router uses. */
export const INVALIDATION_ENDPOINT = { enabled: true, listen_addr: '127.0.0.1:0', shared_key: SHARED_KEY } as const;

/** `representations` of an entity call, or none. */
export function representationsOf(call: SubgraphCall): Array<Record<string, unknown>> {
  const value = call.variables.representations;
  return Array.isArray(value) ? (value as Array<Record<string, unknown>>) : [];
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A loopback port that is free now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
