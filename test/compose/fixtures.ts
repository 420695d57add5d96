/** Small Federation v2 subgraphs shared by the compose and execution-config tests. */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';

export const accountsSdl = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type Query {
    me: User
  }

  type User @key(fields: "id") {
    id: ID!
    name: String
  }
`;

export const reviewsSdl = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type User @key(fields: "id") {
    id: ID!
    reviews: [Review!]!
  }

  type Review {
    body: String!
  }
`;

export const productsSdl = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type Query {
    topProducts: [Product!]!
  }

  type Product @key(fields: "upc") {
    upc: ID!
    name: String
  }
`;

/** Clashes with accounts: `Query.me` is a `User` there and an `Int` here. */
export const clashingSdl = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type Query {
    me: Int
  }
`;

export const ACCOUNTS_URL = 'http://127.0.0.1:4001/graphql';
export const REVIEWS_URL = 'http://127.0.0.1:4002/graphql';

/** A supergraph of accounts + reviews, composed in memory. */
export function accountsAndReviewsSupergraph(urls: { accounts?: string; reviews?: string } = {}): string {
  const result = composeServices([
    { name: 'accounts', url: urls.accounts ?? ACCOUNTS_URL, typeDefs: parse(accountsSdl) },
    { name: 'reviews', url: urls.reviews ?? REVIEWS_URL, typeDefs: parse(reviewsSdl) },
  ]);
  if (result.errors) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return result.supergraphSdl;
}

/** A temporary folder for one test; `write` creates files (and folders) in it. */
export interface TempDir {
  /** Absolute path of the folder. */
  path: string;
  /** Writes `text` to `relativePath` inside the folder and returns its absolute path. */
  write(relativePath: string, text: string): Promise<string>;
  /** Deletes the folder. */
  remove(): Promise<void>;
}

export async function createTempDir(): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), 'switchyard-compose-'));
  return {
    path,
    async write(relativePath, text) {
      const file = join(path, relativePath);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text, 'utf8');
      return file;
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
