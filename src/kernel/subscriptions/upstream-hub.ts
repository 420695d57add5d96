/**
 * Deduplication of subgraph subscriptions: clients subscribing to the same
 * subgraph operation, variables, forwarded headers and `connection_init`
 * payload share one upstream subscription. Each client has its own queue of
 * the events that arrived after it joined; the last one leaving closes the
 * upstream, and an upstream that completes or fails ends every client on it.
 */
import type { GraphQLError } from 'graphql';
import type { SubgraphResponse } from '../fetch/subgraph-types.js';
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
    for (const key of Object.keys(inner).sort()) sorted[key] = (inner as Record<string, unknown>)[key];
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

  /** Joins the upstream subscription for `target`, opening it if no client has it open. */
  subscribe(target: UpstreamTarget, open: OpenUpstream): SharedSubscription {
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
    return upstream.join();
  }
}

/** A client's queue on a shared upstream. */
class Subscriber implements SharedSubscription {
  private readonly pending: SubgraphResponse[] = [];
  private finished = false;
  private failure: GraphQLError | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly leave: (subscriber: Subscriber) => void) {}

  push(event: SubgraphResponse): void {
    if (this.finished) return;
    this.pending.push(event);
    this.notify();
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
    this.pending.length = 0;
    this.end(error);
    this.leave(this);
  }

  async next(): Promise<SubgraphResponse | undefined> {
    while (this.pending.length === 0 && !this.finished) await new Promise<void>((resolve) => (this.wake = resolve));
    const event = this.pending.shift();
    if (event) return event;
    this.close();
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure;
    return undefined;
  }

  close(): void {
    const wasFinished = this.finished;
    this.finished = true;
    this.pending.length = 0;
    this.notify();
    if (!wasFinished) this.leave(this);
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

  constructor(
    private readonly upstream: UpstreamSubscription,
    private readonly forget: () => void,
  ) {
    void this.pump();
  }

  join(): Subscriber {
    const subscriber = new Subscriber((leaving) => this.leave(leaving));
    this.subscribers.add(subscriber);
    return subscriber;
  }

  private leave(subscriber: Subscriber): void {
    if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0 || this.ended) return;
    // The last client left: the subgraph subscription is completed and its connection closed.
    this.ended = true;
    this.forget();
    this.upstream.close();
  }

  private async pump(): Promise<void> {
    let failure: GraphQLError | undefined;
    try {
      for (;;) {
        const event = await this.upstream.next();
        if (event === undefined) break;
        for (const subscriber of this.subscribers) subscriber.push(event);
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
}
