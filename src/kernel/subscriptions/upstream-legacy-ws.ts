/**
 * The client side of the legacy `graphql-ws` subprotocol (Apollo's
 * subscriptions-transport-ws) towards a subgraph, on a socket that
 * negotiated it (upstream-ws.ts dials): one operation per connection.
 *
 * Router → subgraph: `connection_init` {payload: the client's, forwarded},
 * after `connection_ack` a `start` {id, payload: {query, variables,
 * operationName}}; when the router is done first, `stop` {id} and
 * `connection_terminate`, then the socket closes (1000). Subgraph → router:
 * `ka` (ignored), `data` {id, payload: result} per event, `complete` {id},
 * `error` {id, payload: an error or a list of them} (ends the subscription),
 * `connection_error` (the subgraph refused the connection).
 */
import type { RawData, WebSocket } from 'ws';
import type { GraphQLErrorJSON } from '../errors.js';
import type { SubgraphResponse } from '../fetch/subgraph-types.js';
import type { UpstreamEvents } from './upstream-events.js';
import type { SubgraphErrorPropagationConfig } from '../config/core-schema.js';
import { forwardedUpstreamErrors } from './upstream-errors.js';
import { upstreamFailed, type UpstreamTarget } from './upstream-ws.js';

/** How long the subgraph may take to answer `connection_init`. */
export const LEGACY_ACK_TIMEOUT_MS = 10_000;

/** The one operation a connection carries. */
const OPERATION_ID = '1';

/** Runs the subscription on `socket`; the returned function ends it (stop, terminate, close). */
export function runLegacyWebSocket(
  socket: WebSocket,
  target: UpstreamTarget,
  events: UpstreamEvents,
  errorPropagation?: SubgraphErrorPropagationConfig,
  ackTimeoutMs = LEGACY_ACK_TIMEOUT_MS,
): () => void {
  const { subgraph } = target;
  let started = false;
  const send = (message: Record<string, unknown>): void => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const fail = (reason: string, errors?: readonly GraphQLErrorJSON[]): void => {
    events.finish(upstreamFailed(subgraph, reason, errors));
    end();
  };
  const ackTimer = setTimeout(() => fail(`no connection_ack within ${ackTimeoutMs} ms`), ackTimeoutMs);

  const onMessage = (data: RawData, isBinary: boolean): void => {
    if (events.ended) return;
    const text = isBinary ? undefined : String(data);
    const message = text === undefined ? undefined : parseMessage(text);
    if (!message) {
      fail('the subgraph sent a message that is not a JSON object with a "type"');
      return;
    }
    switch (message.type) {
      case 'connection_ack':
        if (started) return;
        clearTimeout(ackTimer);
        started = true;
        send({
          type: 'start',
          id: OPERATION_ID,
          payload: { query: target.query, variables: { ...target.variables }, ...(target.operationName ? { operationName: target.operationName } : {}) },
        });
        return;
      case 'connection_error': {
        const errors = forwardedUpstreamErrors(subgraph, message.payload, errorPropagation);
        fail(`the subgraph refused the connection${errors?.[0] ? `: ${errors[0].message}` : ''}`, errors);
        return;
      }
      case 'data':
        if (message.id !== OPERATION_ID) return;
        if (message.payload === null || typeof message.payload !== 'object' || Array.isArray(message.payload)) {
          fail('the subgraph sent a data message that is not a GraphQL result');
          return;
        }
        events.push(message.payload as SubgraphResponse, Buffer.byteLength(text ?? ''));
        return;
      case 'error': {
        if (message.id !== undefined && message.id !== OPERATION_ID) return;
        const errors = forwardedUpstreamErrors(subgraph, message.payload, errorPropagation);
        fail(errors?.[0]?.message ?? 'the subgraph sent an error', errors);
        return;
      }
      case 'complete':
        if (message.id !== OPERATION_ID) return;
        events.finish();
        end();
        return;
      default:
      // `ka` and anything newer: nothing to do.
    }
  };
  const onClose = (code: number, reason: Buffer): void => {
    const text = reason.toString('utf8');
    events.finish(upstreamFailed(subgraph, `the connection closed with code ${code}${text ? `: ${text}` : ''}`));
    end();
  };
  // The close that follows tells the subscription what happened; the error itself adds nothing.
  const onError = (): void => undefined;

  let ended = false;
  /** Ends the connection, once; `stop` first when the subgraph's operation is still running. */
  function end(stop = false): void {
    if (ended) return;
    ended = true;
    clearTimeout(ackTimer);
    socket.off('message', onMessage);
    socket.off('close', onClose);
    if (stop && started) send({ type: 'stop', id: OPERATION_ID });
    send({ type: 'connection_terminate' });
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(1000, 'Normal Closure');
  }

  socket.on('message', onMessage);
  socket.on('close', onClose);
  socket.on('error', onError);
  send(target.initPayload ? { type: 'connection_init', payload: { ...target.initPayload } } : { type: 'connection_init' });
  return () => {
    // The router is done first (the last client left): the subgraph is told to stop.
    events.finish();
    end(true);
  };
}

interface LegacyMessage {
  readonly type: string;
  readonly id?: unknown;
  readonly payload?: unknown;
}

function parseMessage(text: string): LegacyMessage | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && typeof (parsed as LegacyMessage).type === 'string') return parsed as LegacyMessage;
  } catch {
    // Not JSON: the caller fails the subscription.
  }
  return undefined;
}
