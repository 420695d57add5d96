/**
 * The response cache's memory footprint: a router with the memory cache
 * (default settings but `max_entries`, so nothing is evicted) fills it with
 * `BENCH_CACHE_ENTITIES` (default 10,000) entities through one request, and
 * the heap growth is read between two full garbage collections. Run with
 * `node --expose-gc`; prints one JSON line (`CacheMemoryResult`) on stdout.
 *
 * Everything runs in this process (two small HTTP subgraphs and the router
 * answering through `router.handle`), so the growth is measured around the
 * fill only: a warm-up request first runs the same operation for one entity
 * outside the filled range (plans, code, connections), and the subgraphs
 * forget the calls they recorded before each reading.
 */
import { useCacheTags } from '../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter } from '../../src/testing/index.js';

/** What the program prints. */
export interface CacheMemoryResult {
  /** Entities the fill request fetched (and the cache stored). */
  readonly entities: number;
  /** `heapUsed` growth over the fill, bytes. */
  readonly heapGrowthBytes: number;
  /** `external` + `arrayBuffers` growth over the fill, bytes (Buffers live outside the V8 heap). */
  readonly externalGrowthBytes: number;
  /** Entity-subgraph requests of the same request sent again: 0 when every entity was a hit. */
  readonly entityFetchesOnRepeat: number;
  /** True when the repeated answer equals the first. */
  readonly sameAnswer: boolean;
}

const entities = Number(process.env.BENCH_CACHE_ENTITIES ?? 10_000);
const CACHE_CONTROL = 'public, max-age=300';

function product(id: number) {
  return {
    id: String(id),
    name: `Product ${id}`,
    description: `A product with the number ${id}, described in a sentence of ordinary length.`,
    price: 100 + (id % 900),
    inStock: id % 3 !== 0,
  };
}

const catalog = await startSubgraph({
  name: 'catalog',
  typeDefs: /* GraphQL */ `
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
    type Query {
      products(offset: Int!, first: Int!): [Product!]!
    }
    type Product @key(fields: "id") {
      id: ID!
    }
  `,
  resolvers: {
    Query: {
      products: (_: unknown, args: { offset: number; first: number }) => Array.from({ length: args.first }, (_unused, i) => ({ id: String(args.offset + i) })),
    },
  },
  reply: () => ({ headers: { 'cache-control': CACHE_CONTROL } }),
});

const details = await startSubgraph({
  name: 'details',
  typeDefs: /* GraphQL */ `
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
    type Product @key(fields: "id") {
      id: ID!
      name: String!
      description: String!
      price: Int!
      inStock: Boolean!
    }
  `,
  resolvers: {
    Product: { __resolveReference: (reference: { id: string }) => product(Number(reference.id)) },
  },
  reply: () => ({ headers: { 'cache-control': CACHE_CONTROL } }),
});

const router = await startTestRouter({
  subgraphs: [
    { name: 'catalog', url: catalog.url, typeDefs: catalog.typeDefs },
    { name: 'details', url: details.url, typeDefs: details.typeDefs },
  ],
  plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory', max_entries: entities * 2 } })],
});

const QUERY = 'query Products($offset: Int!, $first: Int!) { products(offset: $offset, first: $first) { id name description price inStock } }';

async function products(offset: number, first: number): Promise<string> {
  const answer = await router.query({ query: QUERY, variables: { offset, first } });
  const list = (answer.body.data as { products?: unknown[] } | undefined)?.products;
  if (answer.status !== 200 || answer.body.errors || list?.length !== first) {
    throw new Error(`unexpected answer (HTTP ${answer.status}): ${JSON.stringify(answer.body).slice(0, 300)}`);
  }
  return JSON.stringify(answer.body);
}

function settledMemory(): NodeJS.MemoryUsage {
  if (!global.gc) throw new Error('run with node --expose-gc');
  catalog.reset();
  details.reset();
  // Twice: the first collection can leave objects that finalizers release for the second.
  global.gc();
  global.gc();
  return process.memoryUsage();
}

try {
  await products(entities * 10, 1);
  const before = settledMemory();
  const first = await products(0, entities);
  const after = settledMemory();
  const again = await products(0, entities);
  const result: CacheMemoryResult = {
    entities,
    heapGrowthBytes: after.heapUsed - before.heapUsed,
    externalGrowthBytes: after.external + after.arrayBuffers - (before.external + before.arrayBuffers),
    entityFetchesOnRepeat: details.calls.length,
    sameAnswer: again === first,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await router.close();
  await catalog.close();
  await details.close();
}
