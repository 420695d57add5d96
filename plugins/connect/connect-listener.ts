/**
 * The Connect listener: one plain-text port that speaks HTTP/1.1 and
 * HTTP/2 (h2c with prior knowledge). curl, browsers and Connect clients use
 * either; gRPC needs HTTP/2. Each connection is handed to the HTTP/2 server
 * when it opens with the HTTP/2 preface, else to the HTTP/1.1 server.
 * Hostile connections are bounded by the kernel's listener guard.
 */
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import { createServer as createNetServer, type Socket } from 'node:net';
import {
  bindListener,
  guardHttp2Server,
  guardHttpServer,
  guardSocket,
  parseListenAddress,
  RouterError,
  type ListenerTimeouts,
  type Logger,
} from '../../src/index.js';

/** A running listener. */
export interface ConnectListener {
  /** `http://host:port` */
  readonly url: string;
  /** `host:port` it is bound to (the real port when 0 was asked). */
  readonly address: string;
  /** Stops accepting, lets in-flight calls finish (at most `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** Options of `startConnectListener`. */
export interface ConnectListenerOptions {
  /** Where bad connections are logged (debug). */
  readonly log?: Logger;
  /** Bounds to use instead of the kernel's side-listener defaults (tests shorten them). */
  readonly timeouts?: Partial<ListenerTimeouts>;
}

/** What an HTTP/2 connection starts with. */
const H2_PREFACE = 'PRI * HTTP/2.0';
/** Streams one HTTP/2 connection may have open at once (Go's default), so one client cannot hold unbounded memory. */
const MAX_CONCURRENT_STREAMS = 250;

/** Starts listening on `listenAddr`. Rejects with `CONFIG_INVALID` when the address cannot be bound. */
export async function startConnectListener(listenAddr: string, handler: Handler, options: ConnectListenerOptions = {}): Promise<ConnectListener> {
  const { host, port } = parseListenAddress(listenAddr);
  const guard = { name: 'connect', log: options.log, timeouts: options.timeouts };
  const http1 = createHttp1Server({ keepAlive: true }, handler);
  guardHttpServer(http1, { ...guard, detached: true });
  const http2 = createHttp2Server({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } }, handler);
  // The protocol is known within the header bound, else the connection goes.
  const { headersMs } = guardHttp2Server(http2, guard);
  const sockets = new Set<Socket>();
  const sessions = new Set<Http2Session>();
  http2.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });

  const server = createNetServer(function routeConnection(socket) {
    // Before a protocol is chosen nothing else listens to this socket: a reset here must not throw.
    guardSocket(socket, 'connect', options.log);
    sockets.add(socket);
    // A total, not an idle timer: a byte every few seconds does not keep the connection.
    const undecided = setTimeout(() => socket.destroy(), headersMs);
    undecided.unref();
    socket.once('close', () => {
      clearTimeout(undecided);
      sockets.delete(socket);
    });
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const start = seen.subarray(0, H2_PREFACE.length).toString('latin1');
      // Wait for more bytes while they could still be the preface.
      if (start.length < 4 && H2_PREFACE.startsWith(start)) return;
      socket.off('data', onData);
      clearTimeout(undecided);
      socket.pause();
      socket.unshift(seen);
      if (start.startsWith('PRI ')) {
        // The HTTP/2 session reads what is buffered in the socket first.
        http2.emit('connection', socket);
      } else {
        http1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
  });

  let bound: number;
  try {
    bound = (await bindListener(server, host, port, guard)).port;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RouterError('CONFIG_INVALID', `[connect] cannot listen on ${listenAddr} for the Connect endpoints (connect_rpc.server.listen_addr): ${reason}`, {
      plugin: 'connect',
      cause: error,
    });
  }
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${bound}`,
    address: `${shownHost}:${bound}`,
    close: (graceMs = 2_000) =>
      new Promise<void>((resolve) => {
        server.close();
        // Ends the HTTP/1.1 server's timeout sweep (it never listened, so close reports that; nothing to do).
        http1.close(() => undefined);
        http1.closeIdleConnections();
        for (const session of sessions) session.close();
        const done = (): void => {
          clearTimeout(timer);
          for (const socket of sockets) socket.destroy();
          resolve();
        };
        const timer = setTimeout(done, graceMs);
        const check = (): void => {
          if (sockets.size === 0) done();
        };
        for (const socket of sockets) socket.once('close', check);
        check();
      }),
  };
}
