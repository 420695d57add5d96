/**
 * The graph the hostile-client suite attacks a router in front of: real
 * HTTP subgraphs on 127.0.0.1 (`products` with a mutation, a field that
 * echoes the caller's `Authorization`, and a field that fails with
 * extensions a client must not see; `reviews` with entities), plus what a
 * router process reads: the supergraph, a persisted operation in a file
 * store, and a Connect contract.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GraphQLError } from 'graphql';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { writeContractFiles } from '../../../src/connect/index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { openOperationsStore, parseOperationFile, sha256Hex } from '../../../src/operations/index.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';

const link = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';

const NAMES: Record<string, string> = { p1: 'Table', p2: 'Couch', p3: 'Chair' };

/** A real query through both subgraphs (a root fetch and an entity fetch), cacheable. */
export const PRODUCT_QUERY = 'query Product($upc: ID!) { product(upc: $upc) { upc name reviews { body } } }';
/** What `PRODUCT_QUERY` answers for `p1`. */
export const PRODUCT_P1 = { data: { product: { upc: 'p1', name: 'Table', reviews: [{ body: 'Review of p1' }] } } };
/** Registered in the persisted-operations file store for client `hostile`. */
export const PERSISTED_QUERY = 'query TopProducts { products { upc name } }';
export const PERSISTED_HASH = sha256Hex(PERSISTED_QUERY);
export const PERSISTED_CLIENT = 'hostile';
/** The Connect RPC serving `PRODUCT_QUERY`. */
export const CONNECT_PATH = '/products.v1.ProductsService/GetProduct';
/** What the `leaky` field's resolver puts in its error: none of it may reach a client but `code`. */
export const LEAKY_SECRETS = { internalHost: 'db-7.internal:5432', stacktrace: ['at secretQuery (/srv/products/db.ts:42:7)'] };

/** The subgraphs, and what the test reads from them. */
export interface HostileGraph {
  readonly products: TestSubgraph;
  readonly reviews: TestSubgraph;
  readonly subgraphs: readonly TestSubgraph[];
  /** Times `addProduct` ran. */
  readonly mutations: number;
  close(): Promise<void>;
}

/** Starts `products` and `reviews`; every answer says `Cache-Control: max-age=60` (not `public`). */
export async function startHostileGraph(): Promise<HostileGraph> {
  let mutations = 0;
  const cacheable = () => ({ headers: { 'cache-control': 'max-age=60' } });
  const products = await startSubgraph({
    name: 'products',
    typeDefs: /* GraphQL */ `
      ${link}
      type Product @key(fields: "upc") { upc: ID! name: String }
      type Query {
        product(upc: ID!): Product
        products: [Product!]!
        "Who the subgraph thinks is asking: the Authorization header it received. The tag only makes a distinct request."
        me(tag: String): String!
        "Always fails, with extensions that are the subgraph's business only."
        leaky: String
      }
      type Mutation { addProduct(name: String!): Int! }
    `,
    resolvers: {
      Query: {
        product: (_: unknown, { upc }: { upc: string }) => (upc in NAMES ? { upc, name: NAMES[upc] } : null),
        products: () => Object.entries(NAMES).map(([upc, name]) => ({ upc, name })),
        me: (_: unknown, __: unknown, context: unknown) => (context as { headers: Record<string, string> }).headers.authorization ?? 'anonymous',
        leaky: () => {
          throw new GraphQLError('products database refused the query', { extensions: { code: 'DOWNSTREAM_REFUSED', ...LEAKY_SECRETS } });
        },
      },
      Mutation: { addProduct: () => ++mutations },
      Product: { __resolveReference: (ref: { upc: string }) => (ref.upc in NAMES ? { upc: ref.upc, name: NAMES[ref.upc] } : null) },
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
  const subgraphs = [products, reviews];
  return {
    products,
    reviews,
    subgraphs,
    get mutations() {
      return mutations;
    },
    close: async () => {
      await Promise.all(subgraphs.map((subgraph) => subgraph.close()));
    },
  };
}

/**
 * Writes into `dir` what every router of the suite reads: `supergraph.graphql`,
 * the persisted operation (file store `operations/`) and the Connect contract
 * (`services/products/v1`).
 */
export async function writeGraphFiles(dir: string, graph: HostileGraph): Promise<void> {
  const composed = composeSubgraphs(graph.subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
  await writeFile(join(dir, 'supergraph.graphql'), composed.supergraphSdl);

  const store = await openOperationsStore({ provider: 'file', path: join(dir, 'operations') });
  const file = parseOperationFile('TopProducts.graphql', new TextEncoder().encode(PERSISTED_QUERY));
  if ('problems' in file) throw new Error(file.problems.join('\n'));
  await store.push('default', PERSISTED_CLIENT, file.operations);

  const contract = join(dir, 'services', 'products', 'v1');
  await mkdir(contract, { recursive: true });
  await writeFile(join(contract, 'GetProduct.graphql'), PRODUCT_QUERY.replace('query Product', 'query GetProduct'));
  await writeContractFiles({ dir: contract, schema: readSupergraph(composed.supergraphSdl).apiSchema });
}
