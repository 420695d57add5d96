/**
 * What every listener of the router does with hostile or broken
 * connections, in one place: resets at any moment, half-open and idle
 * connections, headers trickled a byte at a time (slowloris), garbage
 * instead of a request, and clients that stop reading their answer. A bad
 * connection is answered 4xx or closed, logged at debug, and never throws:
 * the process keeps serving everyone else. Listeners take their bounds from
 * here and may shorten them (tests do).
 */
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { constants as http2Constants, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logger.js';

/** How long a connection may take at each step before it is closed. All in milliseconds, all bounded. */
export interface ListenerTimeouts {
  /** The request line and headers (or, on HTTP/2, a first stream) must all arrive within this; after it 408 and close. */
  readonly headersMs: number;
  /** The whole request, body included, must arrive within this (at least `headersMs`). */
  readonly requestMs: number;
  /** A connection with no request in flight is closed after this. */
  readonly keepAliveMs: number;
  /** No byte either way for this long while the answer waits in memory (the client stopped reading) or the request is incomplete: closed. */
  readonly stallMs: number;
  /** How often the header and request bounds are checked: Node sweeps for them, so they hold to within this. */
  readonly checkIntervalMs: number;
}

/**
 * The main listener (`listen_addr`). Keep-alive stays above the 60s idle
 * timeout of common load balancers, so they never reuse a connection the
 * router is closing.
 */
export const MAIN_LISTENER_TIMEOUTS: ListenerTimeouts = Object.freeze({
  headersMs: 10_000,
  requestMs: 60_000,
  keepAliveMs: 65_000,
  stallMs: 60_000,
  checkIntervalMs: 1_000,
});

/** Side listeners (Connect, invalidation, metrics, profiling, plugins' `ctx.listen`; see src/kernel/listen/side-listener.ts): their clients are near and their requests small. */
export const SIDE_LISTENER_TIMEOUTS: ListenerTimeouts = Object.freeze({
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  stallMs: 30_000,
  checkIntervalMs: 1_000,
});

/** How a listener is guarded. */
export interface ListenerGuardOptions {
  /** Names the listener in log lines (`listener` field), e.g. `connect`. */
  readonly name: string;
  /** Bad connections are logged at debug, failures to accept at warn. Default: not logged. */
  readonly log?: Logger;
  /** Bounds to use instead of `base`'s, one by one. */
  readonly timeouts?: Partial<ListenerTimeouts>;
  /** The bounds not overridden. Default: `SIDE_LISTENER_TIMEOUTS`. */
  readonly base?: ListenerTimeouts;
}

/** The bounds a listener runs with: `base` with `timeouts` over it. Throws on one that is not a positive finite number. */
export function listenerTimeouts(options: Pick<ListenerGuardOptions, 'timeouts' | 'base'>): ListenerTimeouts {
  const merged = { ...(options.base ?? SIDE_LISTENER_TIMEOUTS), ...options.timeouts };
  for (const [key, value] of Object.entries(merged)) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`listener timeout ${key} must be a positive number of ms, got ${value}`);
  }
  // Node refuses a header bound beyond the request bound.
  return Object.freeze({ ...merged, requestMs: Math.max(merged.requestMs, merged.headersMs) });
}

/**
 * Lingering close (as nginx's `lingering_close`). An answer that closes the
 * connection while the request's body is still arriving (a 413 over
 * `limits.max_request_body`, or any refusal made before the body was read:
 * a CSRF 400, a 415, a multipart upload asking for a stream) would
 * otherwise destroy the socket with the client still writing: the client's
 * kernel then gets a reset, its write fails (EPIPE, ECONNRESET) and the
 * answer, though sent, is lost unread. Instead the router's side is shut
 * after the answer (FIN) and what the client still sends is read and
 * dropped, chunk by chunk and never kept, until the client shuts its side
 * or either bound is reached; then the socket is destroyed.
 *
 * - `ms`, 2 s from the answer: on loopback or a LAN the rest of a body some
 *   MB past the limit arrives in milliseconds, and 2 s still carries the
 *   `bytes` bound at about 17 Mbit/s. A client that trickles (slowloris)
 *   holds a socket for 2 s more and no request work (nginx's
 *   `lingering_time` default is 30 s).
 * - `bytes`, 4 MiB dropped: about what the two kernels' socket buffers hold
 *   (Linux's largest `tcp_wmem` is 4 MiB), so a body the client had already
 *   written arrives; a client sending many times that past the limit is
 *   cut, and the router reads at most 4 MiB more per refused request.
 */
export const LINGER_BOUNDS: Readonly<{ ms: number; bytes: number }> = Object.freeze({ ms: 2_000, bytes: 4 * 1024 * 1024 });

/** Where a socket keeps the request it carries now: an answer that closes the connection lingers when that body is incomplete. */
const CURRENT_REQUEST = Symbol('switchyard.currentRequest');

type TrackedSocket = Socket & { [CURRENT_REQUEST]?: IncomingMessage; destroySoon(): void };

/** Sockets draining a refused body (their parse failures are no client's fault to log). */
const lingering = new WeakSet<Duplex>();

/**
 * Makes a socket linger when node closes it after an answer (node calls
 * `destroySoon` when a response with `Connection: close` finished) and the
 * request's body has not all arrived; otherwise node's own close.
 */
function lingerAfterAnswer(socket: TrackedSocket): void {
  const destroySoon = socket.destroySoon;
  socket.destroySoon = function (this: TrackedSocket): void {
    const request = this[CURRENT_REQUEST];
    if (request === undefined || request.complete || this.destroyed || !this.readable) destroySoon.call(this);
    else linger(this);
  };
}

function linger(socket: TrackedSocket): void {
  lingering.add(socket);
  // The answer is written; the FIN follows it.
  if (socket.writable) socket.end();
  let dropped = 0;
  const close = (): void => {
    clearTimeout(deadline);
    socket.destroy();
  };
  const deadline = setTimeout(close, LINGER_BOUNDS.ms);
  deadline.unref();
  const drop = (chunk: Buffer): void => {
    dropped += chunk.length;
    if (dropped > LINGER_BOUNDS.bytes) close();
  };
  // Node's HTTP parser reads the socket itself; a 'data' listener takes the reading back (node stops its parser's
  // direct reads), and the server's own 'data' listener is removed: the rest is dropped here, never parsed as a request.
  socket.on('data', drop);
  for (const listener of socket.listeners('data')) if (listener !== drop) socket.off('data', listener as (chunk: Buffer) => void);
  // The client shut its side: nothing more to drop.
  socket.once('end', close);
  socket.once('close', () => clearTimeout(deadline));
  socket.resume();
  // The parser may have stopped the socket's reads (its request's body was not being read): start them again.
  // The stream itself still counts a read in progress (the parser took the bytes), so resume() alone would not.
  socket._read(0);
}

/** Sockets already guarded: the Connect listener guards a socket before handing it to its HTTP/1.1 server, which would again. */
const guarded = new WeakSet<Duplex>();

/** Logs a socket's errors (a reset, a broken pipe) instead of letting one go unhandled, which would end the process. */
export function guardSocket(socket: Duplex, name: string, log?: Logger): void {
  if (guarded.has(socket)) return;
  guarded.add(socket);
  socket.on('error', (error: NodeJS.ErrnoException) => log?.debug({ listener: name, code: error.code, reason: error.message }, 'Client connection failed'));
}

/** Node's answers to a request it could not read, by error code; anything else is 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/** The response in flight on a socket. Node keeps it there (`_httpMessage`) and its own error handling reads it the same way. */
function responseOn(socket: Duplex): ServerResponse | null | undefined {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
}

/**
 * Guards an HTTP/1.1 server: call it before the server listens (or gets its
 * first connection). Sets the header, request and keep-alive bounds;
 * answers a request that cannot be parsed or came too slowly with
 * 400/408/431 and `Connection: close` (or just closes when an answer
 * already started); closes a connection idle with an answer it does not
 * read. `detached`: the server never listens itself, connections are
 * emitted into it (the Connect listener's HTTP/1.1 side).
 */
export function guardHttpServer(server: HttpServer, options: ListenerGuardOptions & { readonly detached?: boolean }): ListenerTimeouts {
  const timeouts = listenerTimeouts(options);
  const { name, log } = options;
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  // Read when the server starts listening, which starts Node's sweep for the two bounds above.
  (server as HttpServer & { connectionsCheckingInterval: number }).connectionsCheckingInterval = timeouts.checkIntervalMs;
  server.timeout = timeouts.stallMs;
  server.on('connection', (socket: Socket) => {
    guardSocket(socket, name, log);
    lingerAfterAnswer(socket as TrackedSocket);
  });
  // What `lingerAfterAnswer` reads: a property, no table (this runs for every request).
  server.on('request', (req: IncomingMessage) => {
    (req.socket as TrackedSocket)[CURRENT_REQUEST] = req;
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser, cut off mid-body by the linger, fails when the client shuts its side: expected, and the socket is done.
    if (lingering.has(socket)) {
      socket.destroy();
      return;
    }
    // Resets and broken pipes are logged by guardSocket; here what could not be read.
    if (!('syscall' in error)) log?.debug({ listener: name, code: error.code, reason: error.message }, 'Bad request closed');
    const response = responseOn(socket);
    if (socket.writable && !response?.headersSent) {
      const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? '400 Bad Request';
      socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    }
    socket.destroy();
  });
  // The socket went quiet for `stallMs`, or for the keep-alive bound between requests.
  // A listener here replaces Node's default (close), so it closes by itself when:
  // no request is in flight, or an answer waits unread in memory. A request still
  // being worked on (a slow operation, a CPU profile) keeps its connection.
  server.on('timeout', (socket: Socket) => {
    if (!responseOn(socket) || socket.writableLength > 0) {
      if (socket.writableLength > 0) log?.debug({ listener: name, unsent_bytes: socket.writableLength }, 'Client stopped reading; connection closed');
      socket.destroy();
    }
  });
  // An http.Server starts its sweep on 'listening'; one that never listens must be started here.
  if (options.detached) server.emit('listening');
  log?.debug({ listener: name, timeouts }, 'Listener bounds');
  return timeouts;
}

/**
 * Guards an HTTP/2 server (cleartext, connections emitted into it): a
 * session must open its first stream within `headersMs` and is closed
 * (GOAWAY) once it has had no open stream for `keepAliveMs`, whatever it
 * sends meanwhile (pings, settings, a header block a byte at a time). A
 * stream whose request is not whole within `requestMs`, or that is quiet
 * for `stallMs` with its request incomplete or its answer unread, is
 * cancelled.
 */
export function guardHttp2Server(server: Http2Server, options: ListenerGuardOptions): ListenerTimeouts {
  const timeouts = listenerTimeouts(options);
  const { name, log } = options;
  server.on('session', (session: Http2Session) => {
    let open = 0;
    let idle: NodeJS.Timeout | undefined;
    const closeIdle = (): void => {
      log?.debug({ listener: name, streams_seen: session.state.nextStreamID }, 'Idle HTTP/2 session closed');
      session.close();
      // A peer that never reads cannot hold it open with the GOAWAY still unsent.
      setTimeout(() => session.destroy(), timeouts.stallMs).unref();
    };
    const arm = (ms: number): void => {
      idle = setTimeout(closeIdle, ms);
      idle.unref();
    };
    arm(timeouts.headersMs);
    session.on('error', (error: NodeJS.ErrnoException) => log?.debug({ listener: name, code: error.code, reason: error.message }, 'HTTP/2 session failed'));
    session.on('stream', (stream: ServerHttp2Stream) => {
      open++;
      clearTimeout(idle);
      guardStream(stream, timeouts);
      stream.once('close', () => {
        open--;
        if (open === 0 && !session.closed && !session.destroyed) arm(timeouts.keepAliveMs);
      });
    });
    session.once('close', () => clearTimeout(idle));
  });
  return timeouts;
}

function guardStream(stream: ServerHttp2Stream, timeouts: ListenerTimeouts): void {
  const open = (): boolean => !stream.closed && !stream.destroyed;
  // The client sent END_STREAM, whether or not a handler read the body (a GET's handler never does).
  const requestWhole = (): boolean => stream.endAfterHeaders || stream.state.remoteClose === 1;
  const cancel = (): void => {
    if (open()) stream.close(http2Constants.NGHTTP2_CANCEL);
  };
  const deadline = setTimeout(() => {
    if (open() && !requestWhole()) cancel();
  }, timeouts.requestMs);
  deadline.unref();
  stream.setTimeout(timeouts.stallMs);
  stream.on('timeout', () => {
    if (open() && (!requestWhole() || stream.writableLength > 0)) cancel();
  });
  stream.once('close', () => clearTimeout(deadline));
}

/**
 * Binds `server` to `host:port`; rejects with the bind error (the caller
 * says which setting to fix). Once bound, later server errors (a failed
 * accept when file descriptors run out) are logged, not thrown.
 */
export async function bindListener(server: NetServer, host: string, port: number, options: Pick<ListenerGuardOptions, 'name' | 'log'>): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (error: NodeJS.ErrnoException) => options.log?.warn({ listener: options.name, code: error.code, reason: error.message }, 'Listener error'));
  return server.address() as AddressInfo;
}
