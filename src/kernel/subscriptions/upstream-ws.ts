/**
 * A subgraph subscription over WebSocket (GraphQL over WebSocket,
 * `graphql-transport-ws`, with the `graphql-ws` package's client): one
 * connection per subscription, closed when the subscription ends.
 */
import { GraphQLError } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { RouterError, type GraphQLErrorJSON } from '../errors.js';
import type { JsonObject, SubgraphResponse } from '../fetch/subgraph-types.js';
import type { SubscriptionSettings } from '../graph/execution-config.js';

/** What to subscribe to, and where. */
export interface UpstreamTarget {
  readonly subgraph: string;
  /** The subgraph's subscription settings (from the execution config, or defaulted from its routing URL). */
  readonly settings: SubscriptionSettings;
  /** Headers for the upgrade request (the header rules' output for this subgraph). */
  readonly headers: Readonly<Record<string, string>>;
  /** The `connection_init` payload: the client's, forwarded. Default: none. */
  readonly initPayload: Readonly<Record<string, unknown>> | undefined;
  readonly query: string;
  readonly operationName: string | undefined;
  readonly variables: Readonly<Record<string, unknown>>;
}

/** A running upstream subscription: its events in order, then done (or a thrown `SUBSCRIPTION_UPSTREAM_FAILED`). */
export interface UpstreamSubscription {
  /** The next event; `undefined` once the subgraph completed or `close()` was called. */
  next(): Promise<SubgraphResponse | undefined>;
  /** Completes the subscription upstream and closes its connection; idempotent, immediate. */
  close(): void;
}

/** `http(s)://` becomes `ws(s)://` (Cosmo's compose file names the routing URL by default). */
export function webSocketUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, (_match, secure: string) => `ws${secure}://`);
}

/** A failure of the subgraph's stream, as the client sees it. */
export function upstreamFailed(subgraph: string, reason: string, errors?: readonly GraphQLErrorJSON[]): GraphQLError {
  return new GraphQLError(`Subscription to subgraph "${subgraph}" failed: ${reason}`, {
    extensions: { code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: subgraph, ...(errors ? { errors } : {}) },
  });
}

/**
 * Opens the subscription over WebSocket (`protocol: ws`; SSE is upstream-sse.ts)
 * with the `graphql-transport-ws` subprotocol (or `auto`, which means it); the
 * legacy `graphql-ws` subprotocol throws `SUBSCRIPTION_NOT_SUPPORTED`.
 */
export function subscribeUpstream(target: UpstreamTarget): UpstreamSubscription {
  const { settings, subgraph } = target;
  if (settings.protocol !== 'ws') {
    throw new RouterError('SUBSCRIPTION_NOT_SUPPORTED', `Subgraph "${subgraph}" serves subscriptions over ${settings.protocol}, not WebSocket.`);
  }
  if (settings.websocketSubprotocol === 'graphql-ws') {
    throw new RouterError(
      'SUBSCRIPTION_NOT_SUPPORTED',
      `Subgraph "${subgraph}" uses the legacy graphql-ws subprotocol, which this router does not speak yet (only graphql-transport-ws).`,
    );
  }
  const headers = { ...target.headers };
  class HeaderedWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  }
  const client: Client = createClient({
    url: webSocketUrl(settings.url),
    webSocketImpl: HeaderedWebSocket,
    connectionParams: target.initPayload ? { ...target.initPayload } : undefined,
    lazy: true,
    retryAttempts: 0,
    shouldRetry: () => false,
  });
  const pending: SubgraphResponse[] = [];
  let finished = false;
  let failure: GraphQLError | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const finish = (error?: GraphQLError): void => {
    if (finished) return;
    finished = true;
    failure = error;
    notify();
  };
  const dispose = client.subscribe<JsonObject>(
    { query: target.query, operationName: target.operationName, variables: { ...target.variables } },
    {
      next: (value) => {
        if (finished) return;
        pending.push(value as SubgraphResponse);
        notify();
      },
      error: (error) => finish(failureOf(subgraph, error)),
      complete: () => finish(),
    },
  );
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    finish();
    pending.length = 0;
    dispose();
    void client.dispose();
  };
  return {
    async next() {
      while (pending.length === 0 && !finished) await new Promise<void>((resolve) => (wake = resolve));
      const event = pending.shift();
      if (event) return event;
      close();
      if (failure) throw failure;
      return undefined;
    },
    close,
  };
}

/** What the client reports: an `error` message's errors, a close event, or an Error. */
function failureOf(subgraph: string, error: unknown): GraphQLError {
  if (Array.isArray(error)) {
    const errors = error.filter((e): e is GraphQLErrorJSON => typeof e === 'object' && e !== null && typeof e.message === 'string');
    return upstreamFailed(subgraph, errors[0]?.message ?? 'the subgraph sent an error', errors);
  }
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number') {
    const reason = 'reason' in error && typeof error.reason === 'string' && error.reason !== '' ? `: ${error.reason}` : '';
    return upstreamFailed(subgraph, `the connection closed with code ${error.code}${reason}`);
  }
  return upstreamFailed(subgraph, error instanceof Error ? error.message : String(error));
}
