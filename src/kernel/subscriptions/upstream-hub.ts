/**
 * Deduplication of subgraph subscriptions: clients subscribing to the same
 * subgraph operation, variables, forwarded headers and `connection_init`
 * payload share one upstream subscription. Each client has its own queue of
 * the events that arrived after it joined; the last one leaving closes the
 * upstream, and an upstream that completes or fails ends every client on it.
 *
 * Memory stays bounded whatever is slow. A client's queue is bounded by its
 * `subscriptions.max_queued_bytes`: while one queue is at the bound the
 * shared upstream stops reading (the transport then pauses the subgraph's
 * socket, upstream-events.ts), so a subgraph that sends faster than the
 * router processes its events (each may need entity fetches) is held back
 * by TCP. A queue is at the bound either because the router's own work is
 * behind (then every client on the upstream waits for it, events are never
 * lost) or because the client stopped reading: then its socket holds data
 * and ClientBuffer drops it as too slow, which frees the others.
 */
import type { GraphQLError } from 'graphql';
import type { SubgraphResponse } from '../fetch/subgraph-types.js';
import { setOwn } from '../own-property.js';
import type { ClientBuffer } from './client-buffer.js';
import type { UpstreamSubscription, UpstreamTarget } from './upstream-ws.js';

/** One client's view of a (possibly shared) upstream subscription. */
export interface SharedSubscription extends UpstreamSubscription {
  /** Ends this client's view with an error (its `next()` throws it); the upstream stays for the others. */
  fail(error: GraphQLError): void;
}

/** Opens a subgraph subscription (WebSocket or SSE) for a target. */
export type OpenUpstream = (target: UpstreamTarget) => UpstreamSubscription;

/** The identity of an upstream subscription: everything the subgraph would see. */
export function upstreamKey(target: UpstreamTarget): string {
  const { settings } = target;
  const headers = Object.entries(target.headers)
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return stableJson([
    target.subgraph,
    settings.url,
    settings.protocol,
    settings.websocketSubprotocol,
    headers,
    target.initPayload ?? null,
    target.query,
    target.operationName ?? null,
    target.variables,
  ]);
}

/** JSON with object keys sorted, so that `{a, b}` and `{b, a}` name the same subscription. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    // setOwn: a `$__proto__` variable must tell two subscriptions apart like any other.
    for (const key of Object.keys(inner).sort()) setOwn(sorted, key, (inner as Record<string, unknown>)[key]);
    return sorted;
  });
}

/** Upstream subscriptions of one router process, by key. */
export class UpstreamHub {
  private readonly shared = new Map<string, SharedUpstream>();

  /** Upstream subscriptions open now (each may serve many clients). */
  get upstreams(): number {
    return this.shared.size;
  }

  /**
   * Joins the upstream subscription for `target`, opening it if no client has
   * it open; `buffer` counts the events queued for this client (slow clients).
   */
  subscribe(target: UpstreamTarget, open: OpenUpstream, buffer?: ClientBuffer): SharedSubscription {
    const key = upstreamKey(target);
    let upstream = this.shared.get(key);
    if (!upstream || upstream.ended) {
      // Opening may throw (an unsupported subprotocol): nothing is registered then.
      const opened = open(target);
      const created: SharedUpstream = new SharedUpstream(opened, () => {
        if (this.shared.get(key) === created) this.shared.delete(key);
      });
      upstream = created;
      this.shared.set(key, upstream);
    }
    return upstream.join(buffer);
  }
}

/** While the upstream waits for a full queue, how often the client's buffer is checked again (its socket may have filled meanwhile). */
const RECHECK_MS = 50;

/** An event in a client's queue, with its size as the subgraph sent it (0 when the client's buffer is not counted). */
interface Queued {
  readonly event: SubgraphResponse;
  readonly bytes: number;
}

/** A client's queue on a shared upstream. */
class Subscriber implements SharedSubscription {
  private readonly pending: Queued[] = [];
  private pendingBytes = 0;
  private finished = false;
  private failure: GraphQLError | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly leave: (subscriber: Subscriber) => void,
    /** The client's bound on queued data, if it has one. */
    readonly buffer: ClientBuffer | undefined,
    /** Called when this queue took an event (it may have room again). */
    private readonly took: () => void,
  ) {}

  /** Whether this queue holds `max_queued_bytes` or more: the upstream waits. */
  get full(): boolean {
    return !this.finished && this.buffer !== undefined && this.buffer.limit > 0 && this.pendingBytes >= this.buffer.limit;
  }

  push(event: SubgraphResponse, bytes: number): void {
    if (this.finished) return;
    this.pending.push({ event, bytes });
    this.pendingBytes += bytes;
    this.notify();
    this.buffer?.add(bytes);
  }

  /** The upstream ended (completed, or failed with `error`). */
  end(error?: GraphQLError): void {
    if (this.finished) return;
    this.finished = true;
    this.failure = error;
    this.notify();
  }

  fail(error: GraphQLError): void {
    if (this.finished) return;
    // Events queued before the failure are dropped: the subscription is no longer valid.
    this.drop();
    this.end(error);
    this.leave(this);
  }

  async next(): Promise<SubgraphResponse | undefined> {
    while (this.pending.length === 0 && !this.finished) await new Promise<void>((resolve) => (this.wake = resolve));
    const queued = this.pending.shift();
    if (queued) {
      this.pendingBytes -= queued.bytes;
      this.buffer?.remove(queued.bytes);
      this.took();
      return queued.event;
    }
    this.close();
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure;
    return undefined;
  }

  close(): void {
    const wasFinished = this.finished;
    this.finished = true;
    this.drop();
    this.notify();
    if (!wasFinished) this.leave(this);
  }

  /** Drops the queued events (and their count in the client's buffer). */
  private drop(): void {
    for (const queued of this.pending) this.buffer?.remove(queued.bytes);
    this.pending.length = 0;
    this.pendingBytes = 0;
  }

  private notify(): void {
    const resolve = this.wake;
    this.wake = undefined;
    resolve?.();
  }
}

/** One upstream subscription and the clients on it; reads the upstream as long as one client is there. */
class SharedUpstream {
  private readonly subscribers = new Set<Subscriber>();
  ended = false;
  /** Wakes the pump waiting for a full queue. */
  private room: (() => void) | undefined;

  constructor(
    private readonly upstream: UpstreamSubscription,
    private readonly forget: () => void,
  ) {
    void this.pump();
  }

  join(buffer: ClientBuffer | undefined): Subscriber {
    const subscriber = new Subscriber(
      (leaving) => this.leave(leaving),
      buffer,
      () => this.wakePump(),
    );
    this.subscribers.add(subscriber);
    return subscriber;
  }

  private leave(subscriber: Subscriber): void {
    if (!this.subscribers.delete(subscriber)) return;
    this.wakePump();
    if (this.subscribers.size > 0 || this.ended) return;
    // The last client left: the subgraph subscription is completed and its connection closed.
    this.ended = true;
    this.forget();
    this.upstream.close();
  }

  private async pump(): Promise<void> {
    let failure: GraphQLError | undefined;
    try {
      for (;;) {
        await this.untilRoom();
        const event = await this.upstream.next();
        if (event === undefined) break;
        // Measured once per event (UTF-8 bytes, as sent), and only when a client's queue is bounded.
        let bytes: number | undefined;
        for (const subscriber of this.subscribers) {
          if (subscriber.buffer && subscriber.buffer.limit > 0) bytes ??= Buffer.byteLength(JSON.stringify(event));
          subscriber.push(event, bytes ?? 0);
        }
      }
    } catch (error) {
      failure = error as GraphQLError;
    }
    if (!this.ended) {
      this.ended = true;
      this.forget();
    }
    for (const subscriber of [...this.subscribers]) subscriber.end(failure);
    this.subscribers.clear();
  }

  /**
   * Waits while a client's queue is full (the upstream is not read meanwhile).
   * A full queue whose client stopped reading is dropped by its buffer's
   * check, so a stalled client holds the others up for at most RECHECK_MS.
   */
  private async untilRoom(): Promise<void> {
    for (;;) {
      if (this.ended) return;
      const full = [...this.subscribers].filter((subscriber) => subscriber.full);
      if (full.length === 0) return;
      for (const subscriber of full) subscriber.buffer?.check();
      if (!full.some((subscriber) => subscriber.full)) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.wakePump(), RECHECK_MS);
        this.room = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private wakePump(): void {
    const resolve = this.room;
    this.room = undefined;
    resolve?.();
  }
}
