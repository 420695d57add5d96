/**
 * The graph the load test runs against, started in the load process:
 * `products` (cacheable, its names change on every invalidation round),
 * `reviews` (cacheable entities) and `clock` (never cacheable, and one slow
 * field for the shutdown check). Also writes what the router reads: the
 * supergraph, a persisted operation, and a Connect contract.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { writeContractFiles } from '../../src/connect/index.js';
import { readSupergraph } from '../../src/kernel/graph/read-supergraph.js';
import { openOperationsStore, parseOperationFile, sha256Hex } from '../../src/operations/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';

const link = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';

export const UPCS = ['p1', 'p2', 'p3'] as const;
const BASE_NAMES: Record<string, string> = { p1: 'Table', p2: 'Couch', p3: 'Chair' };

/** Cached through the response cache: root field from products, entities from reviews. */
export const CACHED_QUERY = 'query Product($upc: ID!) { product(upc: $upc) { upc name reviews { body } } }';
/** The clock subgraph answers `no-store`: never cached. */
export const UNCACHED_QUERY = '{ now }';
/** Pushed as a persisted operation; sent by hash. */
export const PERSISTED_QUERY = 'query TopProducts { products { upc name } }';
export const PERSISTED_HASH = sha256Hex(PERSISTED_QUERY);
/** Waits 300 ms in the clock subgraph: in flight when SIGTERM arrives. */
export const SLOW_QUERY = '{ slow }';
/** The Connect RPC: `POST /products.v1.ProductsService/GetProduct`. */
export const CONNECT_PATH = '/products.v1.ProductsService/GetProduct';

/** The running subgraphs and the data version clients should see. */
export interface LoadGraph {
  readonly subgraphs: readonly TestSubgraph[];
  /** Product names carry it (`Table v3`); `bump()` changes it. */
  readonly version: number;
  bump(): number;
  /** The name of a product at the current version. */
  nameOf(upc: string): string;
  close(): Promise<void>;
}

/** Starts the subgraphs. */
export async function startLoadGraph(): Promise<LoadGraph> {
  let version = 1;
  const product = (upc: string) => ({ upc, name: `${BASE_NAMES[upc]} v${version}` });
  const cacheable = () => ({ headers: { 'cache-control': 'max-age=60' } });
  const products = await startSubgraph({
    name: 'products',
    typeDefs: /* GraphQL */ `
      ${link}
      type Product @key(fields: "upc") { upc: ID! name: String }
      type Query { product(upc: ID!): Product products: [Product!]! }
    `,
    resolvers: {
      Query: {
        product: (_: unknown, { upc }: { upc: string }) => (upc in BASE_NAMES ? product(upc) : null),
        products: () => UPCS.map(product),
      },
      Product: { __resolveReference: (ref: { upc: string }) => product(ref.upc) },
    },
    reply: cacheable,
  });
  const reviews = await startSubgraph({
    name: 'reviews',
    typeDefs: /* GraphQL */ `
      ${link}
      type Product @key(fields: "upc") { upc: ID! reviews: [Review!]! }
      type Review { body: String! }
    `,
    resolvers: { Product: { __resolveReference: (ref: { upc: string }) => ref, reviews: (p: { upc: string }) => [{ body: `Review of ${p.upc}` }] } },
    reply: cacheable,
  });
  const clock = await startSubgraph({
    name: 'clock',
    typeDefs: /* GraphQL */ `
      ${link}
      type Query { now: String! slow: String! }
    `,
    resolvers: {
      Query: {
        now: () => new Date().toISOString(),
        slow: async () => {
          await new Promise((resolve) => setTimeout(resolve, 300));
          return 'done';
        },
      },
    },
    reply: () => ({ headers: { 'cache-control': 'no-store' } }),
  });
  const subgraphs = [products, reviews, clock];
  return {
    subgraphs,
    get version() {
      return version;
    },
    bump: () => ++version,
    nameOf: (upc) => product(upc).name,
    close: async () => {
      await Promise.all(subgraphs.map((subgraph) => subgraph.close()));
    },
  };
}

/**
 * Where the response cache keeps entries: `sharedstore` (Redis, one copy for
 * every replica) or `memory-broadcast` (each process its own, invalidations
 * shared through Redis pub/sub).
 */
export type CacheSetup = 'sharedstore' | 'memory-broadcast';

/** Ports and addresses the router config needs. */
export interface RouterFiles {
  readonly dir: string;
  readonly configPath: string;
}

/** Writes the supergraph, the persisted operation, the Connect contract and router.config.yaml into `dir`. */
export async function writeRouterFiles(
  dir: string,
  graph: LoadGraph,
  ports: { router: number; invalidation: number; connect: number },
  redisUrl: string,
  sharedKey: string,
  cache: CacheSetup = 'sharedstore',
): Promise<RouterFiles> {
  const composed = composeSubgraphs(graph.subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
  await writeFile(join(dir, 'supergraph.graphql'), composed.supergraphSdl);

  const store = await openOperationsStore({ provider: 'file', path: join(dir, 'operations') });
  const file = parseOperationFile('TopProducts.graphql', new TextEncoder().encode(PERSISTED_QUERY));
  if ('problems' in file) throw new Error(file.problems.join('\n'));
  await store.push('default', 'load', file.operations);

  const contract = join(dir, 'services', 'products', 'v1');
  await mkdir(contract, { recursive: true });
  await writeFile(join(contract, 'GetProduct.graphql'), CACHED_QUERY.replace('query Product', 'query GetProduct'));
  await writeContractFiles({ dir: contract, schema: readSupergraph(composed.supergraphSdl).apiSchema });

  const configPath = join(dir, 'router.config.yaml');
  await writeFile(
    configPath,
    [
      'version: "1"',
      `listen_addr: "127.0.0.1:${ports.router}"`,
      'log_level: warn',
      // The production settings (README, docs/security.md): the hostile mix runs against them.
      'playground: { enabled: false }',
      'introspection: { enabled: false }',
      'limits: { max_depth: 15, max_aliases: 30, max_tokens: 2000 }',
      'execution_config:',
      '  file: { path: supergraph.graphql, watch: false }',
      'storage_providers:',
      '  sharedstore:',
      `    - { id: main, urls: ["${redisUrl}"] }`,
      'response_cache:',
      '  enabled: true',
      ...(cache === 'sharedstore'
        ? ['  storage: { provider: sharedstore, provider_id: main }', '  invalidation:']
        : ['  storage: { provider: memory }', '  invalidation:', '    broadcast: { enabled: true, provider_id: main }']),
      `    endpoint: { enabled: true, listen_addr: "127.0.0.1:${ports.invalidation}", shared_key: "${sharedKey}" }`,
      'persisted_operations:',
      '  enabled: true',
      '  storage: { provider: file, path: operations }',
      'connect_rpc:',
      '  enabled: true',
      `  server: { listen_addr: "127.0.0.1:${ports.connect}" }`,
      '  services: { path: services }',
      '',
    ].join('\n'),
  );
  return { dir, configPath };
}
