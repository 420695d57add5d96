/**
 * HTTP and WebSocket servers for tests, on a free 127.0.0.1 port, stopped by
 * the test that started them (nothing is kept at module level).
 *
 * ```ts
 * const http = await listenOnLoopback(createServer(handler)); // http.port
 * await http.close();                                         // drops open connections too
 *
 * const ws = await startWebSocketServer();                    // ws's WebSocketServer at /graphql
 * ws.wss.on('connection', (socket, req) => ...);
 * ws.url;                                                     // http://127.0.0.1:<port>/graphql
 * await ws.close();                                           // terminates the sockets still open
 * ```
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServerOptions, WebSocketServer } from 'ws';

/** An HTTP server listening on 127.0.0.1. */
export interface LoopbackServer {
  readonly server: Server;
  readonly port: number;
  /** Closes every connection (idle or not) and stops listening. */
  close(): Promise<void>;
}

/** A ws WebSocketServer on its own loopback HTTP server, at `/graphql`. */
export interface WebSocketTestServer extends LoopbackServer {
  readonly wss: WebSocketServer;
  /** `http://127.0.0.1:<port>/graphql`, as a subgraph URL. */
  readonly url: string;
}

export interface WebSocketTestServerOptions {
  /** Answers plain HTTP requests (those that are no upgrade). Default: 404. */
  readonly onRequest?: RequestListener;
  /** WebSocketServer options besides `server` and `path`, e.g. `handleProtocols`. */
  readonly ws?: Omit<ServerOptions, 'server' | 'port' | 'noServer' | 'path'>;
}

/** Starts `server` listening on a free 127.0.0.1 port. */
export async function listenOnLoopback(server: Server): Promise<LoopbackServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Starts a WebSocket server at `/graphql` on a free 127.0.0.1 port. Nothing
 * can connect before it resolves (the port is unknown till then), so
 * `connection` listeners added afterwards see every socket.
 */
export async function startWebSocketServer(options: WebSocketTestServerOptions = {}): Promise<WebSocketTestServer> {
  const server = createServer(options.onRequest ?? ((_req, res) => res.writeHead(404).end()));
  const wss = new WebSocketServer({ ...options.ws, server, path: '/graphql' });
  const http = await listenOnLoopback(server);
  return {
    ...http,
    wss,
    url: `http://127.0.0.1:${http.port}/graphql`,
    async close() {
      for (const socket of wss.clients) socket.terminate();
      // Resolves once every socket is gone (again at once if it was closed before, e.g. by graphql-ws's dispose()).
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await http.close();
    },
  };
}
