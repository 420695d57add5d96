/**
 * GraphQL over WebSocket (`graphql-transport-ws`) on `/graphql` of the main
 * listener, with the `graphql-ws` package's server on a `ws` server attached
 * to the HTTP server's `upgrade` event. The protocol (init, ping/pong, close
 * codes: 4400 malformed message, 4401 subscribe before init, 4406 unknown
 * subprotocol, 4408 no init in time, 4409 duplicate id) is the package's;
 * every subscribe message runs through the router's pipeline (startOperation).
 * Sockets that negotiate the legacy `graphql-ws` subprotocol are served by
 * legacy-ws-protocol.ts with the same limits. With CORS on, upgrades from an
 * origin it does not allow are refused with 403.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, GraphQLSchema, parse, type ExecutionArgs } from 'graphql';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL, type FormattedExecutionResult, type OperationResult } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../logger.js';
import type { GraphQLResponseBody, OperationRequest } from '../pipeline/stages.js';
import { ClientBuffer, unboundedBuffer } from './client-buffer.js';
import { LEGACY_GRAPHQL_WS_PROTOCOL, serveLegacyConnection, type SocketOperation, type SocketPayload } from './legacy-ws-protocol.js';
import type { EventStream, StartedOperation } from './subscription-runner.js';

/** What the WebSocket endpoint needs from the router. */
export interface WebSocketEndpointOptions {
  readonly log: Logger;
  /** Starts one operation (subscriptions stream; the rest answer once). */
  readonly start: (request: OperationRequest, signal: AbortSignal, initPayload: Readonly<Record<string, unknown>> | undefined, buffer: ClientBuffer) => Promise<StartedOperation>;
  /** `subscriptions.max_per_connection`; 0 = no limit. */
  readonly maxPerConnection: number;
  /** `subscriptions.max_total`; 0 = no limit. */
  readonly maxTotal: number;
  /** Subscriptions counted toward `maxTotal` elsewhere (SSE and multipart streams). Default: none. */
  readonly othersActive?: () => number;
  /** `subscriptions.max_queued_bytes`: data queued for one connection before it is closed with 1008; 0 = no limit. Default: 0. */
  readonly maxQueuedBytes?: number;
  /** Largest message accepted (`limits.max_request_body`); larger ones close the connection with 1009. */
  readonly maxPayloadBytes: number;
  /** Whether an upgrade's `Origin` may connect (the `cors.allow_origins` policy); refused ones get 403. Default: any. */
  readonly originAllowed?: (origin: string | undefined) => boolean;
}

/** The endpoint attached to a listener. */
export interface WebSocketEndpoint {
  /** Active subscriptions on this listener. */
  readonly active: number;
  /** Completes every subscription (clients get `complete`), then closes the connections with 1001. */
  close(): Promise<void>;
}

const GRAPHQL_PATH = '/graphql';

/** Close code for a connection that read too slowly (1008, policy violation: the client did not read what it asked for). */
export const SLOW_CLIENT_CLOSE_CODE = 1008;

/** graphql-ws wants execution arguments; the router's own answer rides in `contextValue`. */
interface Carried {
  readonly stream?: EventStream;
  readonly result?: GraphQLResponseBody;
}

/** Stands in for the schema and document in the arguments graphql-ws passes around (the router's pipeline did the real work). */
const PLACEHOLDER_SCHEMA = new GraphQLSchema({});
const STREAM_DOCUMENT = parse('subscription { __typename }');
const SINGLE_DOCUMENT = parse('{ __typename }');

/** Attaches the endpoint to `server`'s `upgrade` event. */
export function attachWebSocketEndpoint(server: Server, options: WebSocketEndpointOptions): WebSocketEndpoint {
  const { log } = options;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes,
  });
  const all = new Set<EventStream>();
  const perSocket = new WeakMap<WebSocket, Set<EventStream>>();
  const startingOn = new WeakMap<WebSocket, number>();
  const buffers = new WeakMap<WebSocket, ClientBuffer>();
  let startingTotal = 0;
  let closing = false;

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = (request.url ?? '/').split('?')[0];
    // A browser page from an origin CORS does not allow may not open a socket either (WebSockets skip CORS).
    const refusedOrigin = options.originAllowed !== undefined && !options.originAllowed(request.headers.origin);
    if (path !== GRAPHQL_PATH || closing || refusedOrigin) {
      const status = closing ? '503 Service Unavailable' : path !== GRAPHQL_PATH ? '404 Not Found' : '403 Forbidden';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      buffers.set(
        ws,
        new ClientBuffer(
          options.maxQueuedBytes ?? 0,
          () => ws.bufferedAmount,
          (queued) => dropSlowClient(ws, queued),
        ),
      );
      // The legacy subprotocol is served by legacy-ws-protocol.ts; graphql-ws's server takes the rest.
      if (ws.protocol === LEGACY_GRAPHQL_WS_PROTOCOL) serveLegacyConnection(ws, request, { log, start: startOn });
      else wss.emit('connection', ws, request);
    });
  };
  server.on('upgrade', onUpgrade);
  wss.on('connection', (ws: WebSocket) => {
    ws.on('error', (error) => log.debug({ reason: error.message }, 'WebSocket connection failed'));
  });

  /**
   * A connection past `subscriptions.max_queued_bytes`: its subscriptions end
   * at once (their queued events are dropped; the subgraph subscription goes
   * on for other clients), and it is closed with 1008.
   */
  const dropSlowClient = (socket: WebSocket, queuedBytes: number): void => {
    log.warn({ queued_bytes: queuedBytes, limit: options.maxQueuedBytes }, 'Closing a WebSocket client that reads too slowly');
    for (const stream of [...(perSocket.get(socket) ?? [])]) void stream.return();
    socket.close(SLOW_CLIENT_CLOSE_CODE, 'Client too slow: subscriptions.max_queued_bytes exceeded');
  };

  /** Counts the stream as active until it ends, whichever way. */
  const track = (socket: WebSocket, stream: EventStream): EventStream => {
    let owned = perSocket.get(socket);
    if (!owned) perSocket.set(socket, (owned = new Set()));
    owned.add(stream);
    all.add(stream);
    const release = (): void => {
      owned.delete(stream);
      all.delete(stream);
    };
    const tracked: EventStream = {
      async next() {
        try {
          const result = await stream.next();
          if (result.done) release();
          return result;
        } catch (error) {
          release();
          throw error;
        }
      },
      async return() {
        release();
        return stream.return();
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return tracked;
  };

  /** Starts one operation on a socket (either subprotocol), within the limits. */
  const startOn = async (
    socket: WebSocket,
    payload: SocketPayload,
    upgrade: IncomingMessage,
    initPayload: Readonly<Record<string, unknown>> | undefined,
  ): Promise<SocketOperation> => {
    // Operations still starting count too, so concurrent subscribes cannot pass the limits together.
    const starting = startingOn.get(socket) ?? 0;
    if (options.maxPerConnection > 0 && (perSocket.get(socket)?.size ?? 0) + starting >= options.maxPerConnection) {
      return { kind: 'refused', errors: [limitError(`This connection has ${options.maxPerConnection} subscriptions (subscriptions.max_per_connection).`)] };
    }
    if (options.maxTotal > 0 && all.size + startingTotal + (options.othersActive?.() ?? 0) >= options.maxTotal) {
      return { kind: 'refused', errors: [limitError(`The router serves ${options.maxTotal} subscriptions (subscriptions.max_total).`)] };
    }
    if (payload.documentId !== undefined && typeof payload.documentId !== 'string') {
      return { kind: 'refused', errors: [new GraphQLError('"documentId" must be a string.', { extensions: { code: 'BAD_REQUEST' } })] };
    }
    const request = operationRequest(payload, upgrade, initPayload);
    const controller = new AbortController();
    startingOn.set(socket, starting + 1);
    startingTotal++;
    let started: StartedOperation;
    try {
      // Every socket got its buffer at the upgrade; an unbounded one stands in for the type's sake.
      started = await options.start(request, controller.signal, initPayload, buffers.get(socket) ?? unboundedBuffer());
    } finally {
      startingOn.set(socket, (startingOn.get(socket) ?? 1) - 1);
      startingTotal--;
    }
    if (started.kind === 'single') {
      const { response } = started;
      if (response.requestError || response.body.data === undefined) return { kind: 'refused', errors: toGraphQLErrors(response.body) };
      return { kind: 'single', body: response.body };
    }
    if (closing || socket.readyState !== socket.OPEN) {
      await started.events.return();
      return { kind: 'refused', errors: [new GraphQLError('The router is shutting down.', { extensions: { code: 'GRAPH_NOT_READY' } })] };
    }
    const events = started.events;
    const stream: EventStream = {
      next: () => events.next(),
      async return() {
        controller.abort();
        return events.return();
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return { kind: 'stream', stream: track(socket, stream) };
  };

  const endpoint = useServer<Record<string, unknown> | undefined>(
    {
      isProd: true,
      // graphql-ws requires a string `query`; a persisted operation (by hash or `documentId`) may have none.
      jsonMessageReviver: allowPersistedSubscribe,
      onSubscribe: async (ctx, _id, payload) => {
        const started = await startOn(ctx.extra.socket, payload as SocketPayload, ctx.extra.request, ctx.connectionParams ?? undefined);
        if (started.kind === 'refused') return started.errors;
        if (started.kind === 'single') return args(SINGLE_DOCUMENT, { result: started.body });
        return args(STREAM_DOCUMENT, { stream: started.stream });
      },
      // Sent as they are: the router's answers are JSON already (graphql-ws would call toJSON on each error).
      onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
      // The router's answers are JSON already (errors as plain objects): graphql-ws sends them as they are.
      subscribe: (execution) => (execution.contextValue as Carried).stream as unknown as OperationResult,
      execute: (execution) => (execution.contextValue as Carried).result as unknown as OperationResult,
    },
    wss,
  );
  // useServer answers an unknown subprotocol with none, which clients take as a failed handshake. Accept the
  // first offered instead, so graphql-ws closes the connection with the protocol's code, 4406.
  wss.options.handleProtocols = (protocols: Set<string>) =>
    protocols.has(GRAPHQL_TRANSPORT_WS_PROTOCOL)
      ? GRAPHQL_TRANSPORT_WS_PROTOCOL
      : protocols.has(LEGACY_GRAPHQL_WS_PROTOCOL)
        ? LEGACY_GRAPHQL_WS_PROTOCOL
        : (protocols.values().next().value ?? false);

  return {
    get active() {
      return all.size;
    },
    async close() {
      closing = true;
      // Ending each stream makes graphql-ws send `complete` for it.
      await Promise.allSettled([...all].map((stream) => stream.return()));
      await new Promise((resolve) => setImmediate(resolve));
      server.off('upgrade', onUpgrade);
      await endpoint.dispose();
    },
  };
}

/**
 * The JSON reviver for incoming graphql-transport-ws messages: a `subscribe`
 * whose payload has no `query` (a persisted operation: `extensions.persistedQuery`
 * or `documentId`) gets an empty one, so graphql-ws's message check passes
 * and the persisted-operation plugins resolve the text in the request stage.
 * A `doc_id` is read as `documentId`, as over HTTP.
 */
function allowPersistedSubscribe(this: unknown, key: string, value: unknown): unknown {
  if (key !== '' || value === null || typeof value !== 'object') return value;
  const message = value as { type?: unknown; payload?: unknown };
  if (message.type !== 'subscribe' || message.payload === null || typeof message.payload !== 'object' || Array.isArray(message.payload)) return value;
  const payload = message.payload as Record<string, unknown>;
  if (payload.documentId === undefined && payload.doc_id !== undefined) payload.documentId = payload.doc_id;
  if (payload.query === undefined || payload.query === null) payload.query = '';
  return value;
}

function args(document: ExecutionArgs['document'], carried: Carried): ExecutionArgs {
  return { schema: PLACEHOLDER_SCHEMA, document, contextValue: carried };
}

function limitError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'SUBSCRIPTION_LIMIT_EXCEEDED' } });
}

function toGraphQLErrors(body: GraphQLResponseBody): GraphQLError[] {
  const errors = body.errors?.length ? body.errors : [{ message: 'The operation failed.' }];
  return errors.map((error) => new GraphQLError(error.message, { path: error.path, extensions: error.extensions }));
}

/**
 * The kernel's request: the upgrade request's headers, overlaid by a string
 * `Authorization` entry of the init payload (any case; graphql-ws clients'
 * usual way to send a token), then by string entries of its `headers` object
 * (browsers cannot set headers on a WebSocket), names lowercased.
 */
function operationRequest(payload: SocketPayload, upgrade: IncomingMessage, initPayload: Readonly<Record<string, unknown>> | undefined): OperationRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upgrade.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  for (const [name, value] of Object.entries(initPayload ?? {})) if (typeof value === 'string' && name.toLowerCase() === 'authorization') headers.authorization = value;
  const extra = initPayload?.headers;
  if (typeof extra === 'object' && extra !== null && !Array.isArray(extra)) {
    for (const [name, value] of Object.entries(extra)) if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  return {
    // An empty query is how graphql-ws clients send a persisted operation (the protocol requires the field).
    query: payload.query || undefined,
    documentId: typeof payload.documentId === 'string' ? payload.documentId : undefined,
    operationName: payload.operationName ?? undefined,
    variables: payload.variables ?? undefined,
    extensions: payload.extensions ?? undefined,
    headers,
    method: 'POST',
    clientName: headers['graphql-client-name'],
    origin: 'websocket',
  };
}
