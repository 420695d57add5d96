/**
 * Invalidations between replicas (`response_cache.invalidation.broadcast`):
 * the replica that accepts an invalidation publishes its index names on a
 * Redis pub/sub channel, and every replica subscribed to it applies them to
 * its own memory cache. The same shape as the `--workers` cluster bus, across
 * machines. Each message carries the sender's id, so a replica skips its own.
 * On one Redis server it uses PUBLISH / SUBSCRIBE (`broadcast-link.ts`), on
 * a Redis Cluster sharded pub/sub (`sharded-broadcast-link.ts`).
 *
 * Staleness rule: while the subscription is down a replica may miss
 * messages, so when it is subscribed again the replica clears its whole
 * memory cache.
 */
import { randomUUID } from 'node:crypto';
import type { CoreConfig, Logger } from '../../src/index.js';
import { openServerLink, type BroadcastLink, type LinkEvents } from './broadcast-link.js';
import { openShardedLink } from './sharded-broadcast-link.js';

/** One `storage_providers.sharedstore[]` item. */
type SharedStoreProvider = CoreConfig['storage_providers']['sharedstore'][number];

/** Shortest gap between two warnings about an unreachable Redis. */
const WARN_INTERVAL_MS = 10_000;
/** Longest wait for a publish. */
const PUBLISH_TIMEOUT_MS = 500;

/** A broadcast message. */
interface BroadcastMessage {
  readonly from: string;
  readonly indexes: readonly string[];
}

/** What the broadcast does with what it hears. */
export interface BroadcastHandlers {
  /** Another replica invalidated `indexes`. */
  invalidate(indexes: string[]): void;
  /** The subscription came back after a break: messages may have been missed. */
  resync(): void;
}

/** An open broadcast. */
export interface InvalidationBroadcast {
  /** The channel name (`<key_prefix>invalidations`). */
  readonly channel: string;
  /** Tells the other replicas; resolves whether Redis took the message (failures are logged, sampled). */
  publish(indexes: readonly string[]): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Connects a publisher and a subscriber to `provider` in the background (a
 * Redis down at startup does not stop the router; the first successful
 * subscription counts as a comeback, so the cache is cleared then).
 */
export function openInvalidationBroadcast(provider: SharedStoreProvider, channel: string, log: Logger, handlers: BroadcastHandlers): InvalidationBroadcast {
  const self = randomUUID();
  let lastWarnAt = Number.NEGATIVE_INFINITY;
  const warn = (error: unknown, operation: string) => {
    const now = Date.now();
    if (now - lastWarnAt < WARN_INTERVAL_MS) return;
    lastWarnAt = now;
    log.warn(
      { err: error instanceof Error ? error.message : String(error), operation, storage_provider_id: provider.id, channel },
      'Invalidation broadcast unavailable: invalidations apply to this replica only until Redis is back',
    );
  };
  // A break: from the first error (or a failed start) until the subscription is in place again.
  let broken = false;
  const events: LinkEvents = {
    message(text) {
      const indexes = readMessage(text, self);
      if (indexes) handlers.invalidate(indexes);
    },
    down(error) {
      if (!broken) warn(error, 'subscribe');
      broken = true;
    },
    up() {
      if (!broken) return;
      broken = false;
      log.info({ channel }, 'Invalidation broadcast back: clearing the memory cache (messages may have been missed)');
      handlers.resync();
    },
  };
  const link: BroadcastLink = provider.cluster_enabled ? openShardedLink(provider.urls, channel, log, events) : openServerLink(provider.urls[0]!, channel, log, events);
  return {
    channel,
    async publish(indexes) {
      const message: BroadcastMessage = { from: self, indexes };
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          link.publish(JSON.stringify(message)),
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${PUBLISH_TIMEOUT_MS}ms`)), PUBLISH_TIMEOUT_MS))),
        ]);
        return true;
      } catch (error) {
        warn(error, 'publish');
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      link.close();
    },
  };
}

/** The index names of another replica's message; undefined for ours and for anything malformed (not from a router). */
function readMessage(text: string, self: string): string[] | undefined {
  let message: Partial<BroadcastMessage>;
  try {
    message = JSON.parse(text) as Partial<BroadcastMessage>;
  } catch {
    return undefined;
  }
  if (message === null || typeof message !== 'object' || message.from === self || !Array.isArray(message.indexes)) return undefined;
  return message.indexes.filter((index): index is string => typeof index === 'string');
}
