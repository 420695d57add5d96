/**
 * Opening a store from where it is: the CLI's `--store` text
 * (`SWITCHYARD_OPERATIONS_STORE`) or the router's `persisted_operations.storage`.
 */
import { resolve } from 'node:path';
import { DirectoryStorage } from './directory-storage.js';
import { HttpStorage, httpStoreUrlProblem } from './http-storage.js';
import { OperationsStore } from './operations-store.js';
import type { OperationsStorage } from './storage.js';

/** The directory store used when none is named, relative to the working directory. */
export const DEFAULT_STORE_PATH = '.switchyard/operations';

/** Environment variable naming the CLI's store. */
export const STORE_ENV_VARIABLE = 'SWITCHYARD_OPERATIONS_STORE';

/** Where a store is, as the router's config describes it. */
export type StoreLocation =
  /** A directory; relative paths resolve against `cwd`. */
  | { readonly provider: 'file'; readonly path: string }
  /** Redis URLs (a shared store). */
  | { readonly provider: 'redis'; readonly urls: readonly string[]; readonly cluster?: boolean }
  /** A read-only HTTP base URL; a `user:password@` in it is sent as HTTP Basic authorization. */
  | { readonly provider: 'http'; readonly url: string };

/** Options of `openOperationsStore`. */
export interface OpenStoreOptions {
  /** Base of relative directory paths. Default: `process.cwd()`. */
  readonly cwd?: string;
  /** Fail after a few connection attempts instead of retrying forever (CLI). Default: `false`. */
  readonly failFast?: boolean;
  /** An HTTP store's largest operation file, in bytes. Default: 2 MiB (`MAX_OPERATION_FILE_BYTES`). */
  readonly maxOperationBytes?: number;
}

/**
 * Reads a `--store` value: `redis://` / `rediss://` URL, `http(s)://` base URL,
 * or a directory path. Throws on another URL scheme.
 */
export function parseStoreLocation(text: string): StoreLocation {
  if (text.trim() === '') throw new Error('the store location is empty');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) return { provider: 'file', path: text };
  if (scheme === 'redis' || scheme === 'rediss') return { provider: 'redis', urls: [text] };
  if (scheme === 'http' || scheme === 'https') {
    // The reason never repeats the text: it may carry a password (sent as Basic authorization by HttpStorage).
    const problem = httpStoreUrlProblem(text);
    if (problem) throw new Error(`the ${scheme}:// store URL ${problem}`);
    return { provider: 'http', url: text };
  }
  throw new Error(`unsupported store "${scheme}://": use a directory path, redis://host:port[/db] or an http(s):// base URL`);
}

/** Opens the storage provider for a location (Redis connects before this resolves). */
export async function openOperationsStorage(
  location: StoreLocation,
  { cwd = process.cwd(), failFast = false, maxOperationBytes }: OpenStoreOptions = {},
): Promise<OperationsStorage> {
  switch (location.provider) {
    case 'file':
      return new DirectoryStorage(resolve(cwd, location.path));
    case 'http':
      return new HttpStorage(location.url, maxOperationBytes === undefined ? {} : { maxOperationBytes });
    case 'redis': {
      // Loaded only when a Redis store is used.
      const { openRedisStorage } = await import('./redis-storage.js');
      return openRedisStorage({ urls: location.urls, cluster: location.cluster, failFast });
    }
  }
}

/** Opens a store for a location. */
export async function openOperationsStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<OperationsStore> {
  return new OperationsStore(await openOperationsStorage(location, options));
}
