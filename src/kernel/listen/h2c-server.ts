/**
 * One plain-text port that speaks HTTP/1.1 and HTTP/2 with prior knowledge
 * (h2c): each connection goes to the HTTP/2 server when it opens with the
 * HTTP/2 preface, else to the HTTP/1.1 server. curl, browsers and Connect
 * clients use either; gRPC needs HTTP/2. Both servers are guarded by the
 * listener guard, and a connection that has not shown its protocol within
 * the header bound is closed.
 */
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { guardHttp2Server, guardHttpServer, guardSocket, type ListenerTimeouts } from '../router/listener-guard.js';

/** A handler for both protocols: Node's compatibility API gives HTTP/2 requests the HTTP/1.1 shape. */
export type DualProtocolHandler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** What an HTTP/2 connection starts with. */
const H2_PREFACE = 'PRI * HTTP/2.0';

/** The servers behind the port, and what their close needs. */
export interface H2cServer {
  /** The server that listens; it hands each connection on. */
  readonly server: NetServer;
  /** Open connections, whichever protocol they speak. */
  readonly sockets: ReadonlySet<Socket>;
  /** Asks every connection to finish: idle HTTP/1.1 ones close, HTTP/2 sessions get GOAWAY. */
  drain(): void;
}

export function createH2cServer(
  handler: DualProtocolHandler,
  options: { readonly name: string; readonly log?: Logger; readonly timeouts?: Partial<ListenerTimeouts>; readonly maxConcurrentStreams: number },
): H2cServer {
  const guard = { name: options.name, log: options.log, timeouts: options.timeouts };
  const http1 = createHttp1Server({ keepAlive: true }, handler);
  guardHttpServer(http1, { ...guard, detached: true });
  const http2 = createHttp2Server({ settings: { maxConcurrentStreams: options.maxConcurrentStreams } }, handler);
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
    guardSocket(socket, options.name, options.log);
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

  return {
    server,
    sockets,
    drain() {
      // Ends the HTTP/1.1 server's timeout sweep (it never listened, so close reports that; nothing to do).
      http1.close(() => undefined);
      http1.closeIdleConnections();
      for (const session of sessions) session.close();
    },
  };
}
