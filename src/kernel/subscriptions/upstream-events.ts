/**
 * The events a subgraph subscription received and the router has not read
 * yet, in order, then its end (completed, or failed with an error): what
 * each upstream transport (WebSocket, legacy WebSocket, SSE) fills and
 * `UpstreamSubscription.next()` reads.
 */
import type { GraphQLError } from 'graphql';
import type { SubgraphResponse } from '../fetch/subgraph-types.js';

export class UpstreamEvents {
  private readonly pending: SubgraphResponse[] = [];
  private finished = false;
  private failure: GraphQLError | undefined;
  private wake: (() => void) | undefined;

  /** Whether the stream ended (its remaining events may still be read). */
  get ended(): boolean {
    return this.finished;
  }

  push(event: SubgraphResponse): void {
    if (this.finished) return;
    this.pending.push(event);
    this.notify();
  }

  /** Ends the stream: completed, or failed with `error` (thrown by `next()` after the queued events). Only the first end counts. */
  finish(error?: GraphQLError): void {
    if (this.finished) return;
    this.finished = true;
    this.failure = error;
    this.notify();
  }

  /** Drops the queued events (the reader left). */
  clear(): void {
    this.pending.length = 0;
  }

  /** The next event; `undefined` once the stream completed; throws its failure once. */
  async next(): Promise<SubgraphResponse | undefined> {
    while (this.pending.length === 0 && !this.finished) await new Promise<void>((resolve) => (this.wake = resolve));
    const event = this.pending.shift();
    if (event) return event;
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure;
    return undefined;
  }

  private notify(): void {
    const resolve = this.wake;
    this.wake = undefined;
    resolve?.();
  }
}
