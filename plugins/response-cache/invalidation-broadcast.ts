/**
 * Invalidations between replicas (`response_cache.invalidation.broadcast`):
 * the replica that accepts an invalidation publishes its index names on a
 * Redis pub/sub channel, and every replica subscribed to it applies them to
 * its own memory cache. The same shape as the `--workers` cluster bus, across
 * machines. Each message carries the sender's id, so a replica skips its own.
 *
 * Staleness rule: while the subscription is down a replica may miss
 * messages, so when it comes back (the client resubscribes by itself) the
 * replica clears its whole memory cache.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import type { CoreConfig, Logger } from '../../src/index.js';

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
  const socket = { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000) };
  const publisher = createClient({ url: provider.urls[0], disableOfflineQueue: true, socket });
  const subscriber = createClient({ url: provider.urls[0], socket });
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
  for (const client of [publisher, subscriber]) {
    client.on('error', (error: Error) => log.debug({ err: error.message, storage_provider_id: provider.id }, 'Invalidation broadcast connection error'));
  }
  // A break: from the first error (or startup) until the subscriber is ready and subscribed again.
  let broken = false;
  let firstReady = true;
  subscriber.on('error', (error: Error) => {
    if (!broken) warn(error, 'subscribe');
    broken = true;
  });
  subscriber.on('ready', () => {
    if (!broken && !firstReady) return;
    const missed = broken;
    firstReady = false;
    broken = false;
    if (missed) {
      log.info({ channel }, 'Invalidation broadcast back: clearing the memory cache (messages may have been missed)');
      handlers.resync();
    }
  });
  const onMessage = (text: string) => {
    let message: BroadcastMessage;
    try {
      message = JSON.parse(text) as BroadcastMessage;
    } catch {
      return;
    }
    if (message.from === self || !Array.isArray(message.indexes)) return;
    handlers.invalidate(message.indexes.filter((index): index is string => typeof index === 'string'));
  };
  const started = (async () => {
    try {
      await subscriber.connect();
      await subscriber.subscribe(channel, onMessage);
    } catch (error) {
      broken = true;
      warn(error, 'subscribe');
    }
  })();
  publisher.connect().catch((error: unknown) => warn(error, 'publish'));
  return {
    channel,
    async publish(indexes) {
      const message: BroadcastMessage = { from: self, indexes };
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          publisher.publish(channel, JSON.stringify(message)),
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
      void started;
      for (const client of [subscriber, publisher]) {
        try {
          client.destroy();
        } catch {
          // already closed
        }
      }
    },
  };
}
