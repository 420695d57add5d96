/**
 * A subgraph subscription over WebSocket: one connection per subscription,
 * closed when the subscription ends, in the subprotocol the compose file's
 * `websocket_subprotocol` names or (`auto`) the subgraph accepted.
 *
 * One message may be at most the subgraph's `traffic_shaping`
 * `max_response_body` (as its HTTP answers and SSE events): `ws` stops
 * reading a larger one as soon as its length is known, and the subscription
 * ends with `SUBSCRIPTION_UPSTREAM_FAILED`.
 */
import { GraphQLError } from 'graphql';
import { createClient, GRAPHQL_TRANSPORT_WS_PROTOCOL, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { RouterError, type GraphQLErrorJSON } from '../errors.js';
import type { JsonObject, SubgraphResponse } from '../fetch/subgraph-types.js';
import type { SubscriptionSettings } from '../graph/execution-config.js';
import type { SubgraphErrorPropagationConfig } from '../config/core-schema.js';
import { forwardedUpstreamErrors } from './upstream-errors.js';
import { UpstreamEvents } from './upstream-events.js';
import { runLegacyWebSocket } from './upstream-legacy-ws.js';

/** The legacy subprotocol's name (Apollo's subscriptions-transport-ws). */
const LEGACY_SUBPROTOCOL = 'graphql-ws';

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

/** `auto` offers both: legacy first, since subscriptions-transport-ws servers take the first offered, while graphql-ws servers pick `graphql-transport-ws` wherever it stands. */
const AUTO_OFFER = [LEGACY_SUBPROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL];

/** How long the subgraph may take to answer the WebSocket upgrade. */
export const UPGRADE_TIMEOUT_MS = 10_000;

/** `max_response_body`'s default, for callers without a config. */
const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The code of the error `ws` emits (then closing with 1009) for a message past its `maxPayload`. */
const MESSAGE_TOO_LARGE = 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';

/** A connection to the subgraph and the subprotocol it speaks. */
interface Negotiated {
  readonly socket: WebSocket;
  readonly subprotocol: typeof GRAPHQL_TRANSPORT_WS_PROTOCOL | typeof LEGACY_SUBPROTOCOL;
}

/**
 * Opens the subscription over WebSocket (`protocol: ws`; SSE is
 * upstream-sse.ts) in the subprotocol of `websocket_subprotocol`:
 * `graphql-transport-ws` with the `graphql-ws` package's client, the legacy
 * `graphql-ws` with upstream-legacy-ws.ts, or `auto` (Cosmo's meaning): both
 * are offered and the one the subgraph accepted is spoken; a subgraph that
 * accepts neither by name (answers without a subprotocol) is spoken to in
 * the legacy one.
 */
export function subscribeUpstream(target: UpstreamTarget, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES, errorPropagation?: SubgraphErrorPropagationConfig): UpstreamSubscription {
  const { settings, subgraph } = target;
  if (settings.protocol !== 'ws') {
    throw new RouterError('SUBSCRIPTION_NOT_SUPPORTED', `Subgraph "${subgraph}" serves subscriptions over ${settings.protocol}, not WebSocket.`);
  }
  const events = new UpstreamEvents();
  let stopSession: (() => void) | undefined;
  let dialing: WebSocket | undefined;
  let closed = false;
  void negotiate(target, maxMessageBytes, (socket) => (dialing = socket)).then(
    ({ socket, subprotocol }) => {
      dialing = undefined;
      if (closed) {
        closeUnused(socket);
        return;
      }
      // A subgraph sending faster than the router delivers is held back by TCP (upstream-events.ts).
      events.flowFrom(socket);
      // Emitted before the close that follows it, so this names the cause rather than "closed with code 1006".
      socket.on('error', (error: Error & { code?: string }) => {
        if (error.code !== MESSAGE_TOO_LARGE) return;
        events.finish(upstreamFailed(subgraph, `the subgraph sent a message larger than ${maxMessageBytes} bytes (its traffic_shaping max_response_body)`));
      });
      stopSession =
        subprotocol === LEGACY_SUBPROTOCOL ? runLegacyWebSocket(socket, target, events, errorPropagation) : runTransportWebSocket(socket, target, events, errorPropagation);
    },
    (error: unknown) => {
      dialing = undefined;
      events.finish(upstreamFailed(subgraph, error instanceof Error ? error.message : String(error)));
    },
  );
  const close = (): void => {
    if (closed) return;
    closed = true;
    events.finish();
    events.clear();
    dialing?.terminate();
    stopSession?.();
  };
  return events.subscription(close);
}

/** Dials the subgraph offering the configured subprotocol(s); `onSocket` gets each socket while it connects (so it can be aborted). */
async function negotiate(target: UpstreamTarget, maxPayload: number, onSocket: (socket: WebSocket) => void): Promise<Negotiated> {
  const { websocketSubprotocol } = target.settings;
  const url = webSocketUrl(target.settings.url);
  const offered = websocketSubprotocol === 'auto' ? AUTO_OFFER : [websocketSubprotocol];
  try {
    const socket = await openSocket(url, offered, target.headers, maxPayload, onSocket);
    return { socket, subprotocol: socket.protocol === LEGACY_SUBPROTOCOL ? LEGACY_SUBPROTOCOL : GRAPHQL_TRANSPORT_WS_PROTOCOL };
  } catch (error) {
    // `ws` refuses an answer without a subprotocol; under `auto` such a subgraph is legacy (as Cosmo falls back).
    if (websocketSubprotocol !== 'auto' || !(error instanceof Error) || error.message !== 'Server sent no subprotocol') throw error;
    return { socket: await openSocket(url, [], target.headers, maxPayload, onSocket), subprotocol: LEGACY_SUBPROTOCOL };
  }
}

/**
 * Closes a socket the subscription no longer needs (the client left while it
 * was dialled). openSocket removed its 'error' listener: without one, an
 * invalid frame the subgraph sends during the closing handshake would make
 * `ws` throw the error and end the process.
 */
export function closeUnused(socket: WebSocket, onError: (error: Error) => void = () => undefined): void {
  socket.on('error', onError);
  socket.close(1000, 'Normal Closure');
}

function openSocket(
  url: string,
  protocols: readonly string[],
  headers: Readonly<Record<string, string>>,
  maxPayload: number,
  onSocket: (socket: WebSocket) => void,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [...protocols], { headers: { ...headers }, handshakeTimeout: UPGRADE_TIMEOUT_MS, maxPayload });
    onSocket(socket);
    const opened = (): void => {
      socket.off('error', failed);
      resolve(socket);
    };
    const failed = (error: Error): void => {
      socket.off('open', opened);
      reject(error);
    };
    socket.once('open', opened);
    socket.once('error', failed);
  });
}

/** Runs the subscription on a socket that negotiated `graphql-transport-ws`; the returned function ends it. */
function runTransportWebSocket(socket: WebSocket, target: UpstreamTarget, events: UpstreamEvents, errorPropagation?: SubgraphErrorPropagationConfig): () => void {
  const { subgraph } = target;
  // A close before graphql-ws took the socket over (it listens from the next turn on) still ends the subscription.
  socket.once('close', (code: number, reason: Buffer) => events.finish(failureOf(subgraph, { code, reason: reason.toString('utf8') })));
  const client: Client = createClient({
    url: socket.url,
    webSocketImpl: alreadyOpen(socket),
    connectionParams: target.initPayload ? { ...target.initPayload } : undefined,
    lazy: true,
    retryAttempts: 0,
    shouldRetry: () => false,
  });
  const dispose = client.subscribe<JsonObject>(
    { query: target.query, operationName: target.operationName, variables: { ...target.variables } },
    {
      // graphql-ws hands over the parsed result: its size is measured again.
      next: (value) => events.push(value as SubgraphResponse, Buffer.byteLength(JSON.stringify(value))),
      error: (error) => events.finish(failureOf(subgraph, error, errorPropagation)),
      complete: () => events.finish(),
    },
  );
  return () => {
    dispose();
    // graphql-ws's dispose() waits for the subgraph's connection_ack before closing: a subgraph that never acks
    // would keep the socket open, and a socket that closes first rejects it (an unhandled rejection ends Node).
    // The socket is the router's own: closed here, whatever the client library does.
    Promise.resolve(client.dispose()).catch(() => undefined);
    closeUnused(socket);
  };
}

/**
 * A `webSocketImpl` for graphql-ws's client that hands it the socket dialled
 * already (the subprotocol had to be known first) and replays its `open`
 * event, which graphql-ws waits for to send `connection_init`.
 */
function alreadyOpen(socket: WebSocket): typeof WebSocket {
  function OpenWebSocket(): WebSocket {
    setImmediate(() => socket.emit('open'));
    return socket;
  }
  return Object.assign(OpenWebSocket, {
    CONNECTING: WebSocket.CONNECTING,
    OPEN: WebSocket.OPEN,
    CLOSING: WebSocket.CLOSING,
    CLOSED: WebSocket.CLOSED,
  }) as unknown as typeof WebSocket;
}

/** What the client reports: an `error` message's errors, a close event, or an Error. */
function failureOf(subgraph: string, error: unknown, errorPropagation?: SubgraphErrorPropagationConfig): GraphQLError {
  if (Array.isArray(error)) {
    // Only what subgraph_error_propagation lets through, in the message too (upstream-errors.ts).
    const errors = forwardedUpstreamErrors(subgraph, error, errorPropagation);
    return upstreamFailed(subgraph, errors?.[0]?.message ?? 'the subgraph sent an error', errors);
  }
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number') {
    const reason = 'reason' in error && typeof error.reason === 'string' && error.reason !== '' ? `: ${error.reason}` : '';
    return upstreamFailed(subgraph, `the connection closed with code ${error.code}${reason}`);
  }
  return upstreamFailed(subgraph, error instanceof Error ? error.message : String(error));
}
