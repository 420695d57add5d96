/**
 * Two subgraphs whose answers depend on the caller, for the tests of what the
 * response cache may share between users: `shop` answers `me` (the caller's
 * name) and products; `ratings` answers the caller's `myRating` of a product.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startSubgraph, type SubgraphReply, type TestSubgraph } from '../../../src/testing/index.js';

export const LINK = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`;

/** What a subgraph answers for one caller. */
export interface User {
  readonly name: string;
  readonly rating: number;
}

export interface PerUserSubgraphOptions {
  /** The caller of a subgraph call, from its context (which holds the request headers); undefined for no one. */
  readonly userOf: (context: unknown) => User | undefined;
  /** Each subgraph's reply (its `Cache-Control` above all), per call. */
  readonly reply: { readonly shop: () => SubgraphReply; readonly ratings: () => SubgraphReply };
}

export interface PerUserSubgraphs {
  readonly shop: TestSubgraph;
  readonly ratings: TestSubgraph;
}

/**
 * Starts `shop` and `ratings` before the calling file's tests (handing them
 * to `started`), forgets their calls after each test and closes them after
 * all.
 */
export function usePerUserSubgraphs(options: PerUserSubgraphOptions, started: (subgraphs: PerUserSubgraphs) => void): void {
  let subgraphs: Partial<PerUserSubgraphs> = {};
  beforeAll(async () => {
    subgraphs = await startPerUserSubgraphs(options);
    started(subgraphs as PerUserSubgraphs);
  });
  afterEach(() => {
    subgraphs.shop?.reset();
    subgraphs.ratings?.reset();
  });
  afterAll(async () => {
    await Promise.all([subgraphs.shop?.close(), subgraphs.ratings?.close()]);
  });
}

async function startPerUserSubgraphs({ userOf, reply }: PerUserSubgraphOptions): Promise<PerUserSubgraphs> {
  const shop = await startSubgraph({
    name: 'shop',
    typeDefs: `${LINK}
      type Query { me: Viewer product(upc: ID!): Product }
      type Viewer { name: String }
      type Product @key(fields: "upc") { upc: ID! name: String }`,
    resolvers: {
      Query: {
        me: (_: unknown, __: unknown, context: unknown) => (userOf(context) ? { name: userOf(context)!.name } : null),
        product: (_: unknown, args: { upc: string }) => ({ upc: args.upc, name: `Product ${args.upc}` }),
      },
    },
    reply: reply.shop,
  });
  const ratings = await startSubgraph({
    name: 'ratings',
    typeDefs: `${LINK}
      type Product @key(fields: "upc") { upc: ID! myRating: Int }`,
    resolvers: {
      Product: {
        __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
        myRating: (_: unknown, __: unknown, context: unknown) => userOf(context)?.rating ?? null,
      },
    },
    reply: reply.ratings,
  }).catch(async (error: unknown) => {
    await shop.close();
    throw error;
  });
  return { shop, ratings };
}
