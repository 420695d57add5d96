import KeyvRedis, { createClient, createCluster, Keyv } from '@keyv/redis';
import type { DeserializedData } from 'keyv';
import { RouterError, type Logger } from '../../../src/index.js';
import type { SharedStoreProvider } from './find-shared-store.js';
import type { StoredValue } from './cache-store.js';
import { checkStoreVersion } from './store-version.js';
import { UnparsedRow } from './stored-value.js';

/** The Redis commands the store sends beside keyv (same shape on a client and a cluster). */
export interface RedisCommands {
  get(key: string): Promise<string | null>;
  mGet(keys: string[]): Promise<Array<string | null>>;
  del(keys: string | string[]): Promise<number>;
  zAdd(key: string, members: Array<{ score: number; value: string }>): Promise<number>;
  zRangeByScore(key: string, min: number | string, max: number | string): Promise<string[]>;
  zRem(key: string, members: string[]): Promise<number>;
  zRemRangeByScore(key: string, min: number | string, max: number | string): Promise<number>;
  pExpireAt(key: string, msTimestamp: number, mode?: 'NX' | 'GT'): Promise<number>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** An open connection to a shared store. */
export interface RedisConnection {
  /** Entry values, through keyv and @keyv/redis. */
  readonly keyv: Keyv<StoredValue>;
  /** Index and guard commands. */
  readonly commands: RedisCommands;
  close(): Promise<void>;
}

/** Timeouts of the connection. */
export interface RedisTimeouts {
  /** Giving up on the first connection at startup. Default: 5000. */
  readonly connectMs?: number;
  /** Per command; a store slower than this counts as unreachable for that request. Default: 1000. */
  readonly commandMs?: number;
}

/**
 * Connects to a `storage_providers.sharedstore` item (one server, or a
 * cluster when `cluster_enabled`), checks that every server runs Redis 7.0
 * or newer, and wraps it in keyv. Commands fail at once while the store is
 * unreachable (no offline queue), and the client reconnects by itself.
 */
export async function connectRedis(provider: SharedStoreProvider, log: Logger, { connectMs = 5000, commandMs = 1000 }: RedisTimeouts = {}): Promise<RedisConnection> {
  const socket = { connectTimeout: connectMs, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) };
  const common = { disableOfflineQueue: true, socket, commandOptions: { timeout: commandMs } };
  const where = provider.urls.map(hostOf).join(', ');
  const opened = provider.cluster_enabled
    ? openCluster(createCluster({ rootNodes: provider.urls.map((url: string) => ({ url })), defaults: common, commandOptions: { timeout: commandMs } }))
    : openClient(createClient({ url: provider.urls[0], ...common }));
  const { client } = opened;
  // Connection errors repeat on every reconnect attempt; request-path failures are what gets reported.
  client.on('error', (error: Error) => log.debug({ err: error.message, storage_provider_id: provider.id }, 'Shared store connection error'));
  try {
    // At startup the first failure is final: the version cannot be checked without a connection.
    let failFirst: ((error: Error) => void) | undefined;
    const firstError = new Promise<never>((_, reject) => {
      failFirst = reject;
      client.once('error', reject);
    });
    try {
      await withTimeout<unknown>(Promise.race([client.connect(), firstError]), connectMs, `no connection within ${connectMs}ms`);
    } finally {
      if (failFirst) client.off('error', failFirst);
    }
    for (const info of await opened.serverInfos()) {
      const check = checkStoreVersion(info);
      if (!check.ok) throw new RouterError('RESPONSE_CACHE_STORE_UNSUPPORTED', `[response-cache] shared store "${provider.id}" (${where}): ${check.message}`);
    }
  } catch (error) {
    client.destroy();
    if (error instanceof RouterError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new RouterError('RESPONSE_CACHE_STORE_UNAVAILABLE', `[response-cache] cannot reach shared store "${provider.id}" (${where}): ${reason}`, { cause: error });
  }
  const keyv = new Keyv<StoredValue>({
    store: new KeyvRedis<StoredValue>(client, { throwOnErrors: true, throwOnConnectError: true }),
    namespace: undefined,
    useKeyPrefix: false,
    serialize: JSON.stringify,
    deserialize: readRow,
    throwOnErrors: true,
  });
  keyv.on('error', () => undefined); // failures reach callers as rejections; keyv's event copy is not needed
  const commands: RedisCommands = client;
  return {
    keyv,
    commands,
    async close() {
      try {
        await withTimeout(client.close(), 2000, 'close timed out');
      } catch {
        client.destroy();
      }
    },
  };
}

/**
 * Reads a stored row. A value that is not a JSON object (corrupted, or
 * written by something else under our prefix) becomes an `UnparsedRow`,
 * which the store reads as a miss (and reports), so the next answer from
 * the subgraph replaces it; throwing here would fail every read of that
 * key, and of every batch that includes it, until it expired.
 */
function readRow<Value>(text: string): DeserializedData<Value> {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch {
    return new UnparsedRow('not JSON');
  }
  return row !== null && typeof row === 'object' && !Array.isArray(row) ? (row as DeserializedData<Value>) : new UnparsedRow('not a JSON object');
}

type Client = ReturnType<typeof createClient>;
type Cluster = ReturnType<typeof createCluster>;

/** A client or cluster, with how to read the `INFO server` of every server behind it. */
interface Opened {
  readonly client: Client | Cluster;
  serverInfos(): Promise<string[]>;
}

function openClient(client: Client): Opened {
  return { client, serverInfos: async () => [await client.info('server')] };
}

function openCluster(cluster: Cluster): Opened {
  return {
    client: cluster,
    serverInfos: () => Promise.all(cluster.masters.map(async (master) => (await cluster.nodeClient(master)).info('server'))),
  };
}

/** `host:port` of a store URL: never the password. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
