/**
 * The Redis side of the invalidation broadcast: a publishing connection and
 * a subscribed one. `invalidation-broadcast.ts` decides what the messages
 * mean and what a break costs; a link only moves text and reports whether
 * its subscription is in place. Two kinds: one Redis server (PUBLISH /
 * SUBSCRIBE, here) and a Redis Cluster (SPUBLISH / SSUBSCRIBE,
 * `sharded-broadcast-link.ts`).
 */
import { createClient } from '@keyv/redis';
import type { Logger } from '../../src/index.js';

/** What a link reports. */
export interface LinkEvents {
  /** A message on the channel, as sent (ours included). */
  message(text: string): void;
  /** The subscription broke, or could not be made: messages may be missed from now on. */
  down(error: unknown): void;
  /** The subscription is in place (first time, or again after `down`). */
  up(): void;
}

/** An open link. */
export interface BroadcastLink {
  /** Sends one message; rejects when Redis did not take it. */
  publish(text: string): Promise<unknown>;
  close(): void;
}

/** Socket options both kinds use: a short connect timeout, reconnects backing off to 1 s. */
export const LINK_SOCKET = { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000) };

/**
 * Connects to one Redis server in the background. The client resubscribes
 * by itself after a reconnect and emits `ready` once it has, so every
 * `ready` after the first subscription means "subscribed again".
 */
export function openServerLink(url: string, channel: string, log: Logger, events: LinkEvents): BroadcastLink {
  const publisher = createClient({ url, disableOfflineQueue: true, socket: LINK_SOCKET });
  const subscriber = createClient({ url, socket: LINK_SOCKET });
  let subscribed = false;
  for (const client of [publisher, subscriber]) {
    client.on('error', (error: Error) => log.debug({ err: error.message, channel }, 'Invalidation broadcast connection error'));
  }
  subscriber.on('error', (error: Error) => events.down(error));
  subscriber.on('ready', () => {
    if (subscribed) events.up();
  });
  void (async () => {
    try {
      await subscriber.connect();
      await subscriber.subscribe(channel, (text) => events.message(text));
      subscribed = true;
      events.up();
    } catch (error) {
      events.down(error);
    }
  })();
  // A publisher that cannot connect shows in publish(): its failures are what the sender warns about.
  publisher.connect().catch(() => undefined);
  return {
    publish: (text) => publisher.publish(channel, text),
    close() {
      for (const client of [subscriber, publisher]) destroyQuietly(client);
    },
  };
}

/** Closes a client at once, whatever state it is in. */
export function destroyQuietly(client: { destroy(): void }): void {
  try {
    client.destroy();
  } catch {
    // already closed
  }
}
