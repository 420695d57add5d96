/**
 * The reviews subgraph served by Apollo's subscriptions-transport-ws (the
 * legacy `graphql-ws` subprotocol's reference server), recording what the
 * router sends it: upgrade headers, every protocol message, the
 * `connection_init` payloads.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execute, subscribe } from 'graphql';
import { SubscriptionServer } from 'subscriptions-transport-ws';
import { type WebSocket, WebSocketServer } from 'ws';
import { createReviewsSchema, REVIEWS_SDL, type ReviewsSubgraph } from './fixtures.js';

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
  const sockets = new Set<WebSocket>();
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  // Without `handleProtocols`, ws answers with the first subprotocol offered, as the legacy server's own ws did.
  const wss = new WebSocketServer({ server, path: '/graphql', ...(options.noSubprotocol ? { handleProtocols: () => false as const } : {}) });
  // subscriptions-transport-ws closes sockets without `graphql-ws` in `protocol`: the no-subprotocol server names it only to that code.
  const legacyFacing = new EventEmitter();
  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    requests.push({ method: 'GET', protocol: 'ws', headers: { ...req.headers } });
    const messages: LegacyReviewsSubgraph['connections'][number]['messages'] = [];
    connections.push({ subprotocol: socket.protocol, messages });
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name: 'reviews',
    typeDefs: REVIEWS_SDL,
    url: `http://127.0.0.1:${port}/graphql`,
    open,
    requests,
    push,
    connections,
    openConnections: () => sockets.size,
    async close() {
      legacyFacing.removeAllListeners();
      for (const socket of sockets) socket.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => wss.close(() => server.close(() => resolve())));
    },
  };
}
