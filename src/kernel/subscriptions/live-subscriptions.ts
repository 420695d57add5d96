/**
 * The subscriptions running in one router process: the upstream hub they
 * share subgraph subscriptions through, and the set of client streams a
 * newly loaded graph is checked against (hot reload).
 */
import { GraphQLError } from 'graphql';
import type { RouterError } from '../errors.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import type { Logger } from '../logger.js';
import { UpstreamHub } from './upstream-hub.js';

/** A client's running subscription, as hot reload sees it. */
export interface LiveStream {
  /**
   * A new graph is being served: the stream either moves onto it (its
   * following events use the new graph's plan and subgraph URLs) or ends
   * with `SUBSCRIPTION_INVALIDATED`.
   */
  graphChanged(graph: LoadedGraph): void;
}

export class LiveSubscriptions {
  readonly hub = new UpstreamHub();
  private readonly streams = new Set<LiveStream>();

  constructor(private readonly log?: Logger) {}

  /** Client streams running now. */
  get size(): number {
    return this.streams.size;
  }

  /** Registers a running stream; the returned function unregisters it. */
  add(stream: LiveStream): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  /** Checks every running stream against a graph that replaced the one they started on. */
  graphChanged(graph: LoadedGraph): void {
    for (const stream of [...this.streams]) {
      try {
        stream.graphChanged(graph);
      } catch (error) {
        // One stream's check failing must not leave the others unchecked.
        this.log?.error({ err: error }, 'checking a subscription against the reloaded graph failed');
      }
    }
  }
}

/** The error a subscription ends with when the reloaded graph cannot serve it. */
export function subscriptionInvalidated(reason: string): GraphQLError {
  return new GraphQLError(`The graph was reloaded and this subscription no longer fits it: ${reason}`, {
    extensions: { code: 'SUBSCRIPTION_INVALIDATED' },
  });
}

/** A router error as the last message of a client's stream (its code in `extensions`). */
export function asGraphQLError(error: RouterError): GraphQLError {
  return new GraphQLError(error.message, { extensions: { ...error.extensions, code: error.code } });
}
