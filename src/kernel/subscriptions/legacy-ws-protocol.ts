/**
 * The legacy `graphql-ws` WebSocket subprotocol (Apollo's
 * subscriptions-transport-ws, unmaintained since 2021, still spoken by older
 * Apollo Client and GraphiQL setups). No maintained package serves it, and it
 * is small, so it is written here; operations run exactly as on
 * `graphql-transport-ws` (websocket-server.ts starts them, with the same
 * limits and tracking).
 *
 * Client → server: `connection_init` {payload}, `start` {id, payload:
 * {query, variables, operationName, extensions}}, `stop` {id},
 * `connection_terminate`. Server → client: `connection_ack`, `ka`
 * (keep-alive: after the ack, then every 12 s), `connection_error`, `data`
 * {id, payload: result}, `error` {id, payload: [errors]}, `complete` {id}.
 *
 * Bad input, as subscriptions-transport-ws answered it and legacy clients
 * expect: a message that is not JSON or has an unknown type gets an `error`
 * message (the connection stays); a `start` before `connection_init`, without
 * an id or query, or with an id in use gets an `error` for that id. A
 * connection without `connection_init` within 3 s is closed with 4408 (as on
 * `graphql-transport-ws`).
 */
import type { IncomingMessage } from 'node:http';
import type { GraphQLError } from 'graphql';
import type { WebSocket } from 'ws';
import type { GraphQLErrorJSON } from '../errors.js';
import type { Logger } from '../logger.js';
import type { GraphQLResponseBody } from '../pipeline/stages.js';
import { failureErrors } from './http-event-source.js';
import type { EventStream } from './subscription-runner.js';
import { parseClientJson } from '../router/exact-integers.js';

export const LEGACY_GRAPHQL_WS_PROTOCOL = 'graphql-ws';

/**
 * An operation's parameters as either WebSocket subprotocol carries them: a
 * `query`, or (persisted operations) no query text and
 * `extensions.persistedQuery` or a `documentId`.
 */
export interface SocketPayload {
  readonly query?: string;
  readonly operationName?: string | null;
  readonly variables?: Record<string, unknown> | null;
  readonly extensions?: Record<string, unknown> | null;
  /** Checked to be a string before the operation starts. */
  readonly documentId?: unknown;
}

/** An operation started on a socket: refused (limits, request errors), answered once, or streaming. */
export type SocketOperation =
  | { readonly kind: 'refused'; readonly errors: readonly GraphQLError[] }
  | { readonly kind: 'single'; readonly body: GraphQLResponseBody }
  | { readonly kind: 'stream'; readonly stream: EventStream };

export interface LegacyConnectionOptions {
  readonly log: Logger;
  /** Starts one operation on this socket (limits and tracking are the caller's). */
  readonly start: (socket: WebSocket, payload: SocketPayload, upgrade: IncomingMessage, initPayload: Readonly<Record<string, unknown>> | undefined) => Promise<SocketOperation>;
  /** Default 12 s. */
  readonly keepAliveMs?: number;
  /** Default 3 s. */
  readonly connectionInitWaitMs?: number;
  /**
   * Called before each message is handed to the socket: the
   * `subscriptions.max_queued_bytes` check on what the client has not taken
   * yet (may close the socket). Before, not after: one answer larger than the
   * bound is not a slow client.
   */
  readonly sending?: () => void;
}

/** Message types (subscriptions-transport-ws's names). */
const GQL = {
  CONNECTION_INIT: 'connection_init',
  CONNECTION_ACK: 'connection_ack',
  CONNECTION_ERROR: 'connection_error',
  KEEP_ALIVE: 'ka',
  CONNECTION_TERMINATE: 'connection_terminate',
  START: 'start',
  DATA: 'data',
  ERROR: 'error',
  COMPLETE: 'complete',
  STOP: 'stop',
} as const;

/** An operation under its id, from `start` until it ends or is stopped; `stream` once it streams. */
interface Running {
  stream?: EventStream;
}

/** Serves one socket that negotiated `graphql-ws`. */
export function serveLegacyConnection(socket: WebSocket, upgrade: IncomingMessage, options: LegacyConnectionOptions): void {
  // Each start has its own entry, so an id reused after `stop` never picks up what the stopped operation left behind.
  const operations = new Map<string, Running>();
  let initPayload: Readonly<Record<string, unknown>> | undefined;
  let acknowledged = false;
  let keepAlive: NodeJS.Timeout | undefined;

  const send = (message: Record<string, unknown>): void => {
    if (socket.readyState !== socket.OPEN) return;
    options.sending?.();
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(message));
  };
  /** Sends and waits until the socket took the message: a slow reader holds up its own stream (slow clients, client-buffer.ts). */
  const sendAndWait = (message: Record<string, unknown>): Promise<void> =>
    new Promise((resolve) => {
      if (socket.readyState !== socket.OPEN) return resolve();
      options.sending?.();
      if (socket.readyState !== socket.OPEN) return resolve();
      socket.send(JSON.stringify(message), () => resolve());
    });
  const sendErrors = (id: string | undefined, errors: readonly GraphQLErrorJSON[]): void => send({ type: GQL.ERROR, ...(id !== undefined ? { id } : {}), payload: errors });

  const initTimer = setTimeout(() => {
    if (!acknowledged) socket.close(4408, 'Connection initialisation timeout');
  }, options.connectionInitWaitMs ?? 3_000);

  /** Ends the operation under `id` (the id is free at once; its stream ends in the background). */
  const stop = (id: string): void => {
    const running = operations.get(id);
    operations.delete(id);
    if (!running?.stream) return;
    running.stream
      .return()
      .catch((error: unknown) => options.log.debug({ reason: error instanceof Error ? error.message : String(error) }, 'ending a graphql-ws operation failed'));
  };

  /** Sends each event as `data`, then `complete` (or the failure as `error`), unless `stop` came first. */
  const pump = async (id: string, running: Running, stream: EventStream): Promise<void> => {
    try {
      for (;;) {
        const result = await stream.next();
        if (operations.get(id) !== running) return;
        if (result.done) break;
        await sendAndWait({ type: GQL.DATA, id, payload: result.value });
      }
    } catch (error) {
      if (operations.get(id) === running) {
        operations.delete(id);
        sendErrors(id, failureErrors(error));
      }
      return;
    }
    if (operations.get(id) !== running) return;
    operations.delete(id);
    send({ type: GQL.COMPLETE, id });
  };

  const start = async (id: string, payload: SocketPayload): Promise<void> => {
    const running: Running = {};
    operations.set(id, running);
    let started: SocketOperation;
    try {
      started = await options.start(socket, payload, upgrade, initPayload);
    } catch (error) {
      started = { kind: 'refused', errors: [] };
      options.log.error({ err: error }, 'starting a graphql-ws operation failed');
    }
    if (operations.get(id) !== running || socket.readyState !== socket.OPEN) {
      // Stopped (or disconnected) while starting.
      if (started.kind === 'stream') await started.stream.return();
      return;
    }
    if (started.kind === 'refused') {
      operations.delete(id);
      const errors = started.errors.map((error) => error.toJSON() as GraphQLErrorJSON);
      // As subscriptions-transport-ws's server answers a refused document: a result of errors, then `complete`. Apollo Client's
      // WebSocketLink reads an `error` message as a network error ("[object Object]", no graphQLErrors, errorPolicy ignored).
      await sendAndWait({
        type: GQL.DATA,
        id,
        payload: { errors: errors.length > 0 ? errors : [{ message: 'The operation failed.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
      });
      send({ type: GQL.COMPLETE, id });
      return;
    }
    if (started.kind === 'single') {
      operations.delete(id);
      // `complete` once the answer was taken: an answer larger than max_queued_bytes still in the socket is no slow client.
      await sendAndWait({ type: GQL.DATA, id, payload: started.body });
      send({ type: GQL.COMPLETE, id });
      return;
    }
    running.stream = started.stream;
    await pump(id, running, started.stream);
  };

  const onMessage = (data: Buffer, isBinary: boolean): void => {
    // A connection being closed (a slow client dropped, shutdown) runs nothing more.
    if (socket.readyState !== socket.OPEN) return;
    const message = parseMessage(isBinary ? undefined : data.toString('utf8'));
    if (typeof message === 'string') {
      sendErrors(undefined, [{ message }]);
      return;
    }
    const id = typeof message.id === 'string' ? message.id : undefined;
    switch (message.type) {
      case GQL.CONNECTION_INIT: {
        if (acknowledged) return;
        const payload = message.payload;
        if (payload !== undefined && payload !== null && (typeof payload !== 'object' || Array.isArray(payload))) {
          send({ type: GQL.CONNECTION_ERROR, payload: { message: 'The connection_init payload must be an object.' } });
          socket.close(4400, 'Invalid connection_init payload');
          return;
        }
        initPayload = (payload ?? undefined) as Readonly<Record<string, unknown>> | undefined;
        acknowledged = true;
        clearTimeout(initTimer);
        send({ type: GQL.CONNECTION_ACK });
        send({ type: GQL.KEEP_ALIVE });
        keepAlive = setInterval(() => send({ type: GQL.KEEP_ALIVE }), options.keepAliveMs ?? 12_000);
        return;
      }
      case GQL.START: {
        if (id === undefined) {
          sendErrors(undefined, [{ message: 'A start message needs a string "id".', extensions: { code: 'BAD_REQUEST' } }]);
          return;
        }
        if (!acknowledged) {
          sendErrors(id, [{ message: 'Send connection_init before starting operations.', extensions: { code: 'BAD_REQUEST' } }]);
          return;
        }
        if (operations.has(id)) {
          sendErrors(id, [{ message: `An operation with id "${id}" is running already.`, extensions: { code: 'BAD_REQUEST' } }]);
          return;
        }
        const payload = subscribePayloadOf(message.payload);
        if (typeof payload === 'string') {
          sendErrors(id, [{ message: payload, extensions: { code: 'BAD_REQUEST' } }]);
          return;
        }
        void start(id, payload).catch((error: unknown) => options.log.error({ err: error }, 'graphql-ws operation failed'));
        return;
      }
      case GQL.STOP:
        // `complete` at once: nothing more is sent for the stopped operation, so a reused id's messages cannot mix with it.
        if (id !== undefined) {
          stop(id);
          send({ type: GQL.COMPLETE, id });
        }
        return;
      case GQL.CONNECTION_TERMINATE:
        socket.close(1000, 'Normal Closure');
        return;
      default:
        sendErrors(id, [{ message: `Unknown message type "${String(message.type)}".`, extensions: { code: 'BAD_REQUEST' } }]);
    }
  };

  socket.on('message', onMessage);
  socket.on('error', (error) => options.log.debug({ reason: error.message }, 'WebSocket connection failed'));
  socket.once('close', () => {
    clearTimeout(initTimer);
    clearInterval(keepAlive);
    socket.off('message', onMessage);
    for (const id of [...operations.keys()]) stop(id);
  });
}

interface LegacyMessage {
  readonly type: unknown;
  readonly id?: unknown;
  readonly payload?: unknown;
}

/** The message, or why it is not one. */
function parseMessage(text: string | undefined): LegacyMessage | string {
  if (text === undefined) return 'Messages must be JSON text, not binary.';
  let parsed: unknown;
  try {
    parsed = parseClientJson(text);
  } catch {
    return 'Message must be JSON-parseable.';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || typeof (parsed as LegacyMessage).type !== 'string') {
    return 'Message must be a JSON object with a string "type".';
  }
  return parsed as LegacyMessage;
}

function subscribePayloadOf(payload: unknown): SocketPayload | string {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return 'A start message needs a payload object.';
  const { query, variables, operationName, extensions, documentId: id, doc_id } = payload as Record<string, unknown>;
  const documentId = id ?? doc_id;
  // A persisted operation has no text: its hash (`extensions.persistedQuery`) or `documentId` names it.
  if (query !== undefined && query !== null && typeof query !== 'string') return 'The payload needs a string "query".';
  if (documentId !== undefined && documentId !== null && typeof documentId !== 'string') return '"documentId" must be a string.';
  if (!query && !documentId && !extensions) return 'The payload needs a string "query", or a persisted operation (extensions.persistedQuery or documentId).';
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return '"variables" must be an object.';
  if (extensions !== undefined && extensions !== null && (typeof extensions !== 'object' || Array.isArray(extensions))) return '"extensions" must be an object.';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return '"operationName" must be a string.';
  return {
    query: (query ?? undefined) as string | undefined,
    documentId: documentId ?? undefined,
    variables: (variables ?? null) as Record<string, unknown> | null,
    operationName: (operationName ?? null) as string | null,
    extensions: (extensions ?? null) as Record<string, unknown> | null,
  };
}
