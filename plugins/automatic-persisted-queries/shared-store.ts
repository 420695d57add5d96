/**
 * APQ texts shared by replicas in Redis (`automatic_persisted_queries.storage.provider_id`,
 * a `storage_providers.sharedstore` entry). One string key per query,
 * `switchyard:apq:<sha256>`, expiring after `cache.ttl`, or after
 * APQ_SHARED_DEFAULT_TTL_MS when none is set: anonymous clients register
 * texts, so nothing they write may stay forever.
 * Commands fail at once while Redis is unreachable (no offline queue); the
 * client reconnects by itself, and failures are logged at most once every
 * 10 s.
 */
import { createClient, createCluster } from '@keyv/redis';
import type { CoreConfig, Logger } from '../../src/index.js';
import { REDIS_COMMAND_TIMEOUT_MS, withTimeout } from '../../src/operations/index.js';

/** Prefix of every APQ key. */
export const APQ_KEY_PREFIX = 'switchyard:apq:';
/** Shortest gap between two warnings about an unreachable store. */
const WARN_INTERVAL_MS = 10_000;

/** One `storage_providers.sharedstore[]` item. */
type SharedStoreProvider = CoreConfig['storage_providers']['sharedstore'][number];

/** The shared half of the APQ cache. */
export interface ApqSharedStore {
  /** The text registered under `hash`; `undefined` when unknown or when Redis cannot be reached. */
  get(hash: string): Promise<string | undefined>;
  /** Keeps `text` under `hash` (failures are logged, never thrown). */
  set(hash: string, text: string): Promise<void>;
  close(): Promise<void>;
}

interface Commands {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, options?: { PX: number }): Promise<unknown>;
}

/**
 * Opens the store; the connection is made in the background, so a Redis that
 * is down at startup does not stop the router (APQ then works per process
 * until it is back).
 */
export function openApqSharedStore(provider: SharedStoreProvider, ttlMs: number, log: Logger): ApqSharedStore {
  const socket = { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000) };
  const client = provider.cluster_enabled
    ? createCluster({ rootNodes: provider.urls.map((url) => ({ url })), defaults: { disableOfflineQueue: true, socket } })
    : createClient({ url: provider.urls[0], disableOfflineQueue: true, socket });
  client.on('error', (error: Error) => log.debug({ err: error.message, storage_provider_id: provider.id }, 'APQ shared store connection error'));
  const commands = client as unknown as Commands;
  let lastWarnAt = Number.NEGATIVE_INFINITY;
  let failing = false;
  const failed = (error: unknown, operation: 'read' | 'write') => {
    failing = true;
    const now = Date.now();
    if (now - lastWarnAt < WARN_INTERVAL_MS) return;
    lastWarnAt = now;
    log.warn(
      { err: error instanceof Error ? error.message : String(error), operation, storage_provider_id: provider.id },
      'APQ shared store unreachable: hash-only requests for queries registered elsewhere get PersistedQueryNotFound',
    );
  };
  const succeeded = () => {
    if (!failing) return;
    failing = false;
    log.info({ storage_provider_id: provider.id }, 'APQ shared store reachable again');
  };
  let connected = false;
  const connecting = client.connect().then(
    () => {
      connected = true;
    },
    (error: unknown) => failed(error, 'read'),
  );
  // Commands fail fast while disconnected (no offline queue), but the first
  // requests after startup wait for the first connection, a command's time at most.
  const firstConnection = async () => {
    if (!connected) await withTimeout(connecting, REDIS_COMMAND_TIMEOUT_MS).catch(() => undefined);
  };
  return {
    async get(hash) {
      try {
        await firstConnection();
        const text = await withTimeout(commands.get(APQ_KEY_PREFIX + hash), REDIS_COMMAND_TIMEOUT_MS);
        succeeded();
        return text ?? undefined;
      } catch (error) {
        failed(error, 'read');
        return undefined;
      }
    },
    async set(hash, text) {
      try {
        await firstConnection();
        await withTimeout(commands.set(APQ_KEY_PREFIX + hash, text, { PX: ttlMs }), REDIS_COMMAND_TIMEOUT_MS);
        succeeded();
      } catch (error) {
        failed(error, 'write');
      }
    },
    async close() {
      void connecting;
      try {
        await withTimeout(client.close(), 2_000);
      } catch {
        try {
          client.destroy();
        } catch {
          // already closed
        }
      }
    },
  };
}
