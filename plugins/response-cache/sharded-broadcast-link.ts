/**
 * The invalidation broadcast on a Redis Cluster, with sharded pub/sub
 * (Redis 7): SPUBLISH and SSUBSCRIBE go to the master that owns the
 * channel's hash slot, and a message stays within that shard instead of
 * crossing the cluster bus to every node as PUBLISH does. One channel means
 * one shard carries all of it, which is little (one message per accepted
 * invalidation).
 *
 * The link finds the owner itself (CLUSTER KEYSLOT and CLUSTER SLOTS on any
 * reachable seed or known master) and holds two plain connections to it, so
 * a break looks and is handled just as on one server. It looks again when
 * the subscription has been down for REROUTE_AFTER_MS (the master may have
 * failed over to a replica at another address) and at once when the server
 * says the slot moved.
 */
import { createClient } from '@keyv/redis';
import type { Logger } from '../../src/index.js';
import { destroyQuietly, LINK_SOCKET, type BroadcastLink, type LinkEvents } from './broadcast-link.js';

/** How long a subscription stays down before the owner of the slot is looked up again. */
const REROUTE_AFTER_MS = 2_000;
/** Longest wait for one node while looking up the owner. */
const LOOKUP_TIMEOUT_MS = 1_000;

type Client = ReturnType<typeof createClient>;

/** A cluster node's address. */
interface NodeAddress {
  readonly host: string;
  readonly port: number;
}

/** What a lookup found. */
interface Lookup {
  /** The master owning the channel's slot. */
  readonly owner: NodeAddress;
  /** Every master, to ask first next time (seeds may have left the cluster). */
  readonly masters: readonly NodeAddress[];
}

/** The connections to the current owner. */
interface Route {
  readonly address: string;
  readonly publisher: Client;
  readonly subscriber: Client;
  /** The server dropped our subscription (slot moved): the connection may be up, the subscription is not. */
  lost: boolean;
}

/** Connects in the background to the master owning `channel`'s slot, found through `seeds`. */
export function openShardedLink(seeds: readonly string[], channel: string, log: Logger, events: LinkEvents): BroadcastLink {
  let closed = false;
  let current: Route | undefined;
  let masters: readonly NodeAddress[] = [];
  let timer: NodeJS.Timeout | undefined;
  let routing: Promise<void> | undefined;

  const scheduleReroute = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void reroute();
    }, REROUTE_AFTER_MS);
    timer.unref();
  };
  const reroute = () => (routing ??= route().finally(() => (routing = undefined)));

  async function route(): Promise<void> {
    let found: Lookup;
    try {
      found = await findOwner(candidates(), channel);
    } catch (error) {
      if (closed) return;
      events.down(error);
      scheduleReroute();
      return;
    }
    if (closed) return;
    masters = found.masters;
    const address = addressOf(found.owner);
    if (current?.address === address && !current.lost) {
      // The same master: its client reconnects by itself; look again later if it stays down.
      if (!current.subscriber.isReady) scheduleReroute();
      return;
    }
    // Not awaited: a connect retries until it succeeds, and lookups must go on meanwhile.
    void connectTo(found.owner);
  }

  /** Seeds and known masters, the current (perhaps dead) owner last. */
  function candidates(): string[] {
    const urls = new Map<string, string>();
    for (const node of masters) if (addressOf(node) !== current?.address) urls.set(addressOf(node), urlFor(seeds[0]!, node));
    for (const seed of seeds) urls.set(seed, seed);
    if (current) urls.set(current.address, urlFor(seeds[0]!, parseAddress(current.address)));
    return [...urls.values()];
  }

  async function connectTo(owner: NodeAddress): Promise<void> {
    if (current) closeRoute(current);
    const url = urlFor(seeds[0]!, owner);
    const mine: Route = {
      address: addressOf(owner),
      publisher: createClient({ url, disableOfflineQueue: true, socket: LINK_SOCKET }),
      subscriber: createClient({ url, socket: LINK_SOCKET }),
      lost: false,
    };
    current = mine;
    const isCurrent = () => current === mine && !closed;
    let subscribed = false;
    for (const client of [mine.publisher, mine.subscriber]) {
      client.on('error', (error: Error) => log.debug({ err: error.message, channel, node: mine.address }, 'Invalidation broadcast connection error'));
    }
    mine.subscriber.on('error', (error: Error) => {
      if (!isCurrent()) return;
      events.down(error);
      scheduleReroute();
    });
    mine.subscriber.on('ready', () => {
      if (subscribed && isCurrent()) events.up();
    });
    mine.subscriber.on('sharded-channel-moved', () => {
      if (!isCurrent()) return;
      mine.lost = true;
      events.down(new Error(`the slot of ${channel} moved away from ${mine.address}`));
      void reroute();
    });
    mine.publisher.connect().catch(() => undefined);
    try {
      await mine.subscriber.connect();
      await mine.subscriber.sSubscribe(channel, (text) => events.message(text));
      subscribed = true;
      if (isCurrent()) events.up();
    } catch (error) {
      if (!isCurrent()) return;
      events.down(error);
      scheduleReroute();
    }
  }

  void reroute();
  return {
    publish(text) {
      if (!current) return Promise.reject(new Error('no cluster node reached yet'));
      return current.publisher.sPublish(channel, text).catch((error: unknown) => {
        // The slot moved and the subscription has not noticed yet: look the owner up again.
        if (error instanceof Error && error.message.startsWith('MOVED')) void reroute();
        throw error;
      });
    },
    close() {
      closed = true;
      clearTimeout(timer);
      if (current) closeRoute(current);
    },
  };
}

function closeRoute(route: Route): void {
  destroyQuietly(route.subscriber);
  destroyQuietly(route.publisher);
}

/** Asks the candidates in turn which master owns `channel`'s slot. */
async function findOwner(urls: readonly string[], channel: string): Promise<Lookup> {
  let lastError: unknown = new Error('no cluster node to ask');
  for (const url of urls) {
    const client = createClient({ url, socket: { connectTimeout: LOOKUP_TIMEOUT_MS, reconnectStrategy: false } });
    client.on('error', () => undefined); // the rejection below says it
    try {
      const lookup = await withTimeout(
        (async () => {
          await client.connect();
          const slot = await client.clusterKeySlot(channel);
          const ranges = await client.clusterSlots();
          const range = ranges.find((item) => item.from <= slot && slot <= item.to);
          if (!range) throw new Error(`no master serves slot ${slot} (cluster state not ok)`);
          const asked = new URL(url).hostname;
          // A node may announce an empty host: it means the address it was reached at.
          const node = (item: { host: string; port: number }): NodeAddress => ({ host: item.host || asked, port: item.port });
          return { owner: node(range.master), masters: ranges.map((item) => node(item.master)) };
        })(),
        LOOKUP_TIMEOUT_MS * 2,
      );
      return lookup;
    } catch (error) {
      lastError = error;
    } finally {
      destroyQuietly(client);
    }
  }
  throw lastError;
}

function addressOf(node: NodeAddress): string {
  return `${node.host}:${node.port}`;
}

function parseAddress(address: string): NodeAddress {
  const colon = address.lastIndexOf(':');
  return { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
}

/** The seed's URL (scheme, credentials, options) pointed at `node`. */
function urlFor(seed: string, node: NodeAddress): string {
  const url = new URL(seed);
  url.hostname = node.host.includes(':') ? `[${node.host}]` : node.host;
  url.port = String(node.port);
  return url.toString();
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms}ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
