/**
 * The reviews subgraph served by Apollo's subscriptions-transport-ws (the
 * legacy `graphql-ws` subprotocol's reference server), recording what the
 * router sends it: upgrade headers, every protocol message, the
 * `connection_init` payloads.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { execute, subscribe } from 'graphql';
import { SubscriptionServer } from 'subscriptions-transport-ws';
import type { WebSocket } from 'ws';
import { startWebSocketServer } from '../support/loopback-server.js';
import { createReviewsSchema, reviewsAt, type ReviewsSubgraph } from './fixtures.js';

export interface LegacyReviewsSubgraph extends ReviewsSubgraph {
  /** Messages the router sent, per connection, in order. */
  readonly connections: Array<{ subprotocol: string; messages: Array<{ type: string; id?: string; payload?: unknown }> }>;
  /** Connections open now. */
  readonly openConnections: () => number;
}

export interface LegacyOptions {
  /**
   * Answer the upgrade without naming a subprotocol (a server that ignores
   * `Sec-WebSocket-Protocol`); it still speaks the legacy protocol.
   */
  readonly noSubprotocol?: boolean;
  /** Refuse `connection_init` (the server sends `connection_error`). */
  readonly refuseConnections?: boolean;
}

export async function startLegacyReviews(options: LegacyOptions = {}): Promise<LegacyReviewsSubgraph> {
  const { schema, push, open } = createReviewsSchema();
  const requests: ReviewsSubgraph['requests'] = [];
  const connections: LegacyReviewsSubgraph['connections'] = [];
  // Without `handleProtocols`, ws answers with the first subprotocol offered, as the legacy server's own ws did.
  const ws = await startWebSocketServer({ ws: options.noSubprotocol ? { handleProtocols: () => false as const } : {} });
  // subscriptions-transport-ws closes sockets without `graphql-ws` in `protocol`: the no-subprotocol server names it only to that code.
  const legacyFacing = new EventEmitter();
  ws.wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    requests.push({ method: 'GET', protocol: 'ws', headers: { ...req.headers } });
    const messages: LegacyReviewsSubgraph['connections'][number]['messages'] = [];
    connections.push({ subprotocol: socket.protocol, messages });
    socket.on('message', (data) => messages.push(JSON.parse(String(data)) as (typeof messages)[number]));
    if (options.noSubprotocol) Object.defineProperty(socket, 'protocol', { value: 'graphql-ws' });
    legacyFacing.emit('connection', socket, req);
  });
  new SubscriptionServer(
    {
      schema,
      execute,
      subscribe,
      keepAlive: 50,
      onConnect: () => !options.refuseConnections,
    },
    legacyFacing as unknown as ConstructorParameters<typeof SubscriptionServer>[1],
  );
  return {
    ...reviewsAt(ws.url),
    open,
    requests,
    push,
    connections,
    openConnections: () => ws.wss.clients.size,
    async close() {
      legacyFacing.removeAllListeners();
      await ws.close();
    },
  };
}
