/**
 * GraphQL over WebSocket (`graphql-transport-ws`) on `/graphql` of the main
 * listener, with the `graphql-ws` package's server on a `ws` server attached
 * to the HTTP server's `upgrade` event. The protocol (init, ping/pong, close
 * codes: 4400 malformed message, 4401 subscribe before init, 4406 unknown
 * subprotocol, 4408 no init in time, 4409 duplicate id) is the package's;
 * every subscribe message runs through the router's pipeline (startOperation).
 * The package's protocol core (`makeServer`) is bound to `ws` sockets here
 * rather than through its `use/ws` helper, so that the router decides what
 * happens around it: errors are logged by the router's logger (never
 * printed to the console), messages are parsed without a reviver (deeply
 * nested variables reach the pipeline, which refuses them per operation), a
 * subscription id reused right after `complete` waits until the operation
 * that had it has ended, everything sent counts toward
 * `subscriptions.max_queued_bytes`, and a closed socket ends every stream the
 * router started for it. Sockets that negotiate the legacy `graphql-ws`
 * subprotocol are served by legacy-ws-protocol.ts with the same limits. With
 * CORS on, upgrades from an origin it does not allow are refused with 403.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, GraphQLSchema, parse, type ExecutionArgs } from 'graphql';
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, makeServer, type FormattedExecutionResult, type OperationResult } from 'graphql-ws';
import { type RawData, WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../logger.js';
import type { GraphQLResponseBody, OperationRequest } from '../pipeline/stages.js';
import { clientNameOf } from '../router/client-name.js';
import { ClientBuffer, unboundedBuffer } from './client-buffer.js';
import { LEGACY_GRAPHQL_WS_PROTOCOL, serveLegacyConnection, type SocketOperation, type SocketPayload } from './legacy-ws-protocol.js';
import type { EventStream, StartedOperation } from './subscription-runner.js';
import { parseClientJson } from '../router/exact-integers.js';

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

/** How often each graphql-transport-ws connection is pinged, and how long its pong may take. */
const KEEP_ALIVE_MS = 12_000;

/** Close code for a connection that read too slowly (1008, policy violation: the client did not read what it asked for). */
export const SLOW_CLIENT_CLOSE_CODE = 1008;

/** graphql-ws wants execution arguments; the router's own answer rides in `contextValue`. */
interface Carried {
  readonly stream?: EventStream;
  readonly result?: GraphQLResponseBody;
}

/** What graphql-ws's protocol core is given for a connection. */
interface Extra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
  /** The operation running under `id` is ending: its `complete` or `error` is about to be sent. */
  readonly ending: (id: string) => void;
}

/**
 * A `subscribe` the router has seen on a graphql-transport-ws connection,
 * until graphql-ws is done with it (its `finally` ran, so the id is no longer
 * in graphql-ws's own map).
 */
interface SocketSubscribe {
  /** Handed to graphql-ws (a reused id waits until the operation that had it has ended). */
  dispatched: boolean;
  /** The client sent `complete` for it, or its `complete` or `error` is being sent: the client may reuse the id. */
  ending: boolean;
  /** Never to be handed to graphql-ws (completed while waiting, or the socket closed). */
  cancelled: boolean;
  /** Settles (never rejects) once graphql-ws is done with it. */
  settled: Promise<void>;
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
    // graphql-ws's own choice answers an unknown subprotocol with none, which clients take as a failed handshake.
    // The first offered is accepted instead, so the connection is closed with the protocol's code, 4406.
    handleProtocols: (protocols: Set<string>) =>
      protocols.has(GRAPHQL_TRANSPORT_WS_PROTOCOL)
        ? GRAPHQL_TRANSPORT_WS_PROTOCOL
        : protocols.has(LEGACY_GRAPHQL_WS_PROTOCOL)
          ? LEGACY_GRAPHQL_WS_PROTOCOL
          : (protocols.values().next().value ?? false),
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
      // One bound for everything held for the client: its subscriptions' queued events and every answer in its socket.
      const buffer = new ClientBuffer(
        options.maxQueuedBytes ?? 0,
        () => ws.bufferedAmount,
        (queued) => dropSlowClient(ws, queued),
      );
      buffers.set(ws, buffer);
      // Whatever graphql-ws (or the legacy protocol) still knows of them, the streams started for a closed socket end.
      ws.once('close', () => {
        for (const stream of [...(perSocket.get(ws) ?? [])]) {
          stream.return().catch((error: unknown) => log.debug({ reason: reasonOf(error) }, 'ending a WebSocket subscription failed'));
        }
      });
      // The legacy subprotocol is served by legacy-ws-protocol.ts; graphql-ws's protocol core takes the rest.
      if (ws.protocol === LEGACY_GRAPHQL_WS_PROTOCOL) serveLegacyConnection(ws, request, { log, start: startOn, sending: () => buffer.check() });
      else serveGraphQLTransportWs(ws, request, buffer);
    });
  };
  server.on('upgrade', onUpgrade);

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
    // Ended once, however many ask (graphql-ws, the socket's close, a slow-client drop, shutdown).
    let ended: Promise<IteratorResult<GraphQLResponseBody>> | undefined;
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
      return() {
        release();
        ended ??= stream.return();
        return ended;
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

  const protocolCore = makeServer<Record<string, unknown> | undefined, Extra>({
    onSubscribe: async (ctx, _id, payload) => {
      const started = await startOn(ctx.extra.socket, payload as SocketPayload, ctx.extra.request, ctx.connectionParams ?? undefined);
      if (started.kind === 'refused') return started.errors;
      if (started.kind === 'single') return args(SINGLE_DOCUMENT, { result: started.body });
      return args(STREAM_DOCUMENT, { stream: started.stream });
    },
    // Sent as they are: the router's answers are JSON already (graphql-ws would call toJSON on each error).
    onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
    // From here the client may reuse the id (see serveGraphQLTransportWs).
    onError: (ctx, id) => ctx.extra.ending(id),
    onComplete: (ctx, id) => ctx.extra.ending(id),
    // The router's answers are JSON already (errors as plain objects): graphql-ws sends them as they are.
    subscribe: (execution) => (execution.contextValue as Carried).stream as unknown as OperationResult,
    execute: (execution) => (execution.contextValue as Carried).result as unknown as OperationResult,
  });

  /**
   * Serves one socket with graphql-ws's protocol core (what its `use/ws`
   * helper does, with the router's logging, limits and id bookkeeping).
   *
   * A reused id: graphql-ws removes an operation's id from its map only when
   * the operation has finished ending, so a `subscribe` that reuses the id
   * of one still ending would be removed from that map by the old one and
   * orphaned (never stopped by `complete` or a disconnect). The protocol
   * lets a client reuse an id once it sent `complete` for it (or got
   * `complete` or `error`), so such a `subscribe` is not refused: it is
   * handed to graphql-ws once the old operation has ended; a `complete`
   * meanwhile cancels it. A `subscribe` for an id still in use otherwise
   * closes the connection with 4409, as the protocol says.
   */
  const serveGraphQLTransportWs = (socket: WebSocket, request: IncomingMessage, buffer: ClientBuffer): void => {
    const subscribes = new Map<string, SocketSubscribe>();
    let reported = false;
    /** At most one line per connection: a client's reset or bad frame is routine (debug); a failure of the router's own code is an error. */
    const report = (error: unknown): void => {
      if (reported) return;
      reported = true;
      if (socket.readyState !== socket.OPEN) log.debug({ reason: reasonOf(error) }, 'WebSocket connection failed');
      else log.error({ err: error }, 'handling a graphql-transport-ws message failed');
    };
    // ws closes the socket itself on a bad frame or a message over maxPayload (1009); graphql-ws's helper would print a stack trace.
    socket.on('error', report);
    let handle: ((message: string) => Promise<void>) | undefined;
    const closed = protocolCore.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            // Answers to queries count as subscription events do: what the client has not taken yet, before this
            // message (one answer larger than the bound is not a slow client), past max_queued_bytes drops it (1008).
            buffer.check();
            if (socket.readyState !== socket.OPEN) return resolve();
            // A send that fails means the socket is gone: its close ends the operations, nothing to report per message.
            socket.send(data, () => resolve());
          }),
        close: (code, reason) => (code === undefined ? socket.close() : closeSocket(socket, code, reason ?? '')),
        onMessage: (cb) => {
          handle = cb;
        },
      },
      {
        socket,
        request,
        ending: (id) => {
          const current = subscribes.get(id);
          if (current?.dispatched) current.ending = true;
        },
      },
    );
    const run = (message: unknown): Promise<void> =>
      // graphql-ws's parseMessage takes an object as it is (its `onMessage` type says string).
      (handle?.(message as string) ?? Promise.resolve()).catch((error: unknown) => {
        report(error);
        if (socket.readyState === socket.OPEN) socket.close(CloseCode.InternalServerError, 'Internal server error');
      });

    const onMessage = (data: RawData): void => {
      // A connection being closed (a slow client dropped, shutdown) runs nothing more.
      if (socket.readyState !== socket.OPEN) return;
      try {
        dispatch(data);
      } catch (error) {
        // Never out of the listener: a throw here would end the process.
        report(error);
        if (socket.readyState === socket.OPEN) socket.close(CloseCode.InternalServerError, 'Internal server error');
      }
    };
    const dispatch = (data: RawData): void => {
      const message = parsedMessage(String(data));
      const { type, id } = (typeof message === 'object' && message !== null ? message : {}) as { type?: unknown; id?: unknown };
      if (typeof id !== 'string' || (type !== 'subscribe' && type !== 'complete')) {
        void run(message);
        return;
      }
      const current = subscribes.get(id);
      if (type === 'complete') {
        if (current) current.ending = true;
        // Not handed to graphql-ws yet: it never will be.
        if (current && !current.dispatched) current.cancelled = true;
        else void run(message);
        return;
      }
      if (current && !current.ending) {
        // graphql-ws has the id in its map and closes with 4409; one still waiting is the router's to refuse.
        if (current.dispatched) void run(message);
        else closeSocket(socket, CloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
        return;
      }
      const entry: SocketSubscribe = { dispatched: false, ending: false, cancelled: false, settled: Promise.resolve() };
      subscribes.set(id, entry);
      const previous = current?.settled;
      entry.settled = (async () => {
        if (previous) await previous;
        if (entry.cancelled || socket.readyState !== socket.OPEN) return;
        entry.dispatched = true;
        await run(message);
      })().finally(() => {
        if (subscribes.get(id) === entry) subscribes.delete(id);
      });
    };
    socket.on('message', onMessage);

    let pongWait: NodeJS.Timeout | undefined;
    const keepAlive = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), KEEP_ALIVE_MS);
      socket.once('pong', () => clearTimeout(pongWait));
      socket.ping();
    }, KEEP_ALIVE_MS);
    socket.once('close', (code, reason) => {
      clearInterval(keepAlive);
      clearTimeout(pongWait);
      socket.off('message', onMessage);
      for (const entry of subscribes.values()) entry.cancelled = true;
      closed(code, String(reason)).catch((error: unknown) => log.debug({ reason: reasonOf(error) }, 'closing a graphql-transport-ws connection failed'));
    });
  };

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
      for (const client of wss.clients) client.close(1001, 'Going away');
      await new Promise<void>((resolve, reject) => wss.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/**
 * An incoming graphql-transport-ws message, parsed for graphql-ws (text that
 * is not JSON is left as it is: graphql-ws closes the connection with 4400).
 * Parsed without a reviver: V8 applies one recursively, so variables nested
 * a few thousand levels deep would overflow the stack and close the
 * connection; without it they reach the pipeline, which refuses that
 * operation (BAD_USER_INPUT) as on the other transports.
 *
 * A `subscribe` whose payload has no `query` (a persisted operation:
 * `extensions.persistedQuery` or `documentId`) gets an empty one, so
 * graphql-ws's message check passes and the persisted-operation plugins
 * resolve the text in the request stage. A `doc_id` is read as
 * `documentId`, as over HTTP.
 */
function parsedMessage(text: string): unknown {
  let value: unknown;
  try {
    value = parseClientJson(text);
  } catch {
    return text;
  }
  if (value === null || typeof value !== 'object') return value;
  const message = value as { type?: unknown; payload?: unknown };
  if (message.type !== 'subscribe' || message.payload === null || typeof message.payload !== 'object' || Array.isArray(message.payload)) return value;
  const payload = message.payload as Record<string, unknown>;
  if (payload.documentId === undefined && payload.doc_id !== undefined) payload.documentId = payload.doc_id;
  if (payload.query === undefined || payload.query === null) payload.query = '';
  return value;
}

/** A WebSocket close reason is at most 123 bytes of UTF-8 (ws throws past that); longer ones (a client's id in them) are cut. */
const MAX_CLOSE_REASON_BYTES = 123;

/** Closes `socket` with `reason` cut to what a close frame can carry. */
function closeSocket(socket: WebSocket, code: number, reason: string): void {
  // Each character is at least one byte: at most MAX_CLOSE_REASON_BYTES characters, then trimmed to the byte bound.
  let cut = reason.slice(0, MAX_CLOSE_REASON_BYTES);
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES) cut = cut.slice(0, -1);
  socket.close(code, cut);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

/** Init payload entries read as headers: a token, and the client's name where Cosmo's clients put them (client_info_from_initial_payload). */
const PAYLOAD_HEADERS: ReadonlySet<string> = new Set(['authorization', 'graphql-client-name', 'graphql-client-version']);

/**
 * The kernel's request: the upgrade request's headers, overlaid by string
 * `Authorization`, `graphql-client-name` and `graphql-client-version` entries
 * of the init payload (any case; graphql-ws clients' usual way to send a
 * token, and Cosmo's clients' to name themselves), then by string entries
 * of its `headers` object (browsers cannot set headers on a WebSocket),
 * names lowercased.
 */
function operationRequest(payload: SocketPayload, upgrade: IncomingMessage, initPayload: Readonly<Record<string, unknown>> | undefined): OperationRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upgrade.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  for (const [name, value] of Object.entries(initPayload ?? {})) {
    const lower = name.toLowerCase();
    if (typeof value === 'string' && PAYLOAD_HEADERS.has(lower)) headers[lower] = value;
  }
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
    clientName: clientNameOf(headers),
    origin: 'websocket',
  };
}
