/**
 * The events a subgraph subscription received and the router has not read
 * yet, in order, then its end (completed, or failed with an error): what
 * each upstream transport (WebSocket, legacy WebSocket, SSE) fills and
 * `UpstreamSubscription.next()` reads.
 *
 * The queue is bounded: past `UPSTREAM_HIGH_WATER_BYTES` the transport stops
 * reading from the subgraph (a WebSocket is paused, an SSE body is not read
 * further) until the router took the queued events, so a subgraph that sends
 * faster than the router delivers is held back by TCP instead of filling the
 * router's memory (docs/subscriptions.md, "Slow clients").
 */
import type { GraphQLError } from 'graphql';
import type { SubgraphResponse } from '../fetch/subgraph-types.js';
import type { UpstreamSubscription } from './upstream-ws.js';

/** Bytes (as the subgraph sent them) queued before the transport stops reading. */
export const UPSTREAM_HIGH_WATER_BYTES = 64 * 1024;

/** What a transport reads from: paused while the queue is full. */
export interface Pausable {
  pause(): void;
  resume(): void;
}

interface Queued {
  readonly event: SubgraphResponse;
  readonly bytes: number;
}

export class UpstreamEvents {
  private readonly pending: Queued[] = [];
  private queuedBytes = 0;
  private finished = false;
  private failure: GraphQLError | undefined;
  private wake: (() => void) | undefined;
  private source: Pausable | undefined;
  private paused = false;
  private roomWaiters: Array<() => void> = [];

  /** Whether the stream ended (its remaining events may still be read). */
  get ended(): boolean {
    return this.finished;
  }

  /** Whether the transport should stop reading until the router took events. */
  get full(): boolean {
    return this.queuedBytes >= UPSTREAM_HIGH_WATER_BYTES && !this.finished;
  }

  /** Pauses `source` whenever the queue is full, resumes it once the router took the events. */
  flowFrom(source: Pausable): void {
    this.source = source;
    this.updateFlow();
  }

  /** Resolves once the queue has room or the stream ended (for a transport that pulls, as SSE's body reader). */
  async room(): Promise<void> {
    while (this.full) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Queues an event of `bytes` (its size as the subgraph sent it). */
  push(event: SubgraphResponse, bytes: number): void {
    if (this.finished) return;
    this.pending.push({ event, bytes });
    this.queuedBytes += bytes;
    this.notify();
    this.updateFlow();
  }

  /** Ends the stream: completed, or failed with `error` (thrown by `next()` after the queued events). Only the first end counts. */
  finish(error?: GraphQLError): void {
    if (this.finished) return;
    this.finished = true;
    this.failure = error;
    this.notify();
    this.updateFlow();
  }

  /** Drops the queued events (the reader left). */
  clear(): void {
    this.pending.length = 0;
    this.queuedBytes = 0;
    this.updateFlow();
  }

  /** The next event; `undefined` once the stream completed; throws its failure once. */
  async next(): Promise<SubgraphResponse | undefined> {
    while (this.pending.length === 0 && !this.finished) await new Promise<void>((resolve) => (this.wake = resolve));
    const queued = this.pending.shift();
    if (queued) {
      this.queuedBytes -= queued.bytes;
      this.updateFlow();
      return queued.event;
    }
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure;
    return undefined;
  }

  /**
   * The subscription reading this stream: `close` ends the transport, and is
   * called too once the stream completed or failed, so the transport's
   * connection never outlives its events.
   */
  subscription(close: () => void): UpstreamSubscription {
    return {
      next: async () => {
        try {
          const event = await this.next();
          if (event === undefined) close();
          return event;
        } catch (error) {
          close();
          throw error;
        }
      },
      close,
    };
  }

  private updateFlow(): void {
    const full = this.full;
    if (!full) for (const resolve of this.roomWaiters.splice(0)) resolve();
    if (!this.source || full === this.paused) return;
    this.paused = full;
    if (full) this.source.pause();
    else this.source.resume();
  }

  private notify(): void {
    const resolve = this.wake;
    this.wake = undefined;
    resolve?.();
  }
}
