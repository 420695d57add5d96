/**
 * Side listeners: a port of its own beside the main listener (Connect,
 * cache invalidation, metrics, profiling, a third-party plugin's admin
 * port), started the same way for everyone. The kernel parses the address
 * (`host:port`, `[::1]:port`, `:port` = loopback), applies the listener
 * guard (socket errors, slow and idle connections), turns a bad address or
 * a failed bind into a `ListenError` naming the plugin and the config key,
 * warns when the port is reachable beyond loopback, and closes gracefully.
 *
 * Under `--workers`, every worker process that runs the plugin calls this;
 * node:cluster makes the primary bind the port once and hand each
 * connection to one worker, so the listener is served by all workers
 * (round robin) and a bind error is reported in each of them.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { isLoopbackHost, parseListenAddress, warnIfExposed } from '../router/listen-address.js';
import { bindListener, guardHttpServer, type ListenerTimeouts } from '../router/listener-guard.js';
import { createH2cServer, type DualProtocolHandler, type H2cServer } from './h2c-server.js';
import { ListenError } from './listen-error.js';

/** Where and how a side listener listens; what `ctx.listen` takes. */
export interface SideListenerTarget {
  /** Names the listener in logs and errors: kebab-case, e.g. `admin`. */
  readonly name: string;
  /** `host:port`, `[::1]:port` (IPv6), or `:port` (loopback). Port 0 picks a free port. */
  readonly address: string;
  /** Config key the address came from, named in bind errors (`my_plugin.listen_addr`). Default: none. */
  readonly configKey?: string;
  /** What the listener serves, after "cannot listen on ... for" (`the admin endpoints`). Default: `the <name> listener`. */
  readonly purpose?: string;
  /** Subject of the exposure warning (`The admin listener`). Default: `The <name> listener`. */
  readonly label?: string;
  /** Whole text of the warning logged when bound beyond loopback, instead of the default; `false`: the caller warns itself. */
  readonly exposureWarning?: string | false;
  /** Bounds on slow and idle connections instead of the side-listener defaults (`SIDE_LISTENER_TIMEOUTS`). */
  readonly timeouts?: Partial<ListenerTimeouts>;
}

/** Plain HTTP/1.1: the usual case. */
export interface Http1Listener {
  readonly http2?: false;
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/** HTTP/1.1 and cleartext HTTP/2 (prior knowledge) on one port; the handler gets either protocol's request. */
export interface DualProtocolListener {
  readonly http2: true | { readonly maxConcurrentStreams?: number };
  readonly handler: DualProtocolHandler;
}

/** What `startSideListener` takes. `ctx.listen` fills in `plugin` and `log`. */
export type SideListenerOptions = SideListenerTarget &
  (Http1Listener | DualProtocolListener) & {
    /** Plugin that owns the listener, named in errors. Default: none (a kernel listener). */
    readonly plugin?: string;
    /** Bad connections at debug, the exposure warning at warn. Default: not logged. */
    readonly log?: Logger;
  };

/** What `ctx.listen` takes: the plugin and its logger are the context's. */
export type PluginListenOptions = SideListenerTarget & (Http1Listener | DualProtocolListener);

/** A running side listener. */
export interface SideListener {
  readonly name: string;
  /** The bound host, as given (`::1`, `0.0.0.0`). */
  readonly host: string;
  /** The bound port (the real one when 0 was asked). */
  readonly port: number;
  /** `host:port`, IPv6 hosts in brackets. */
  readonly address: string;
  /** `http://host:port` */
  readonly url: string;
  /** Whether it is reachable beyond this machine (the host is not loopback). */
  readonly exposed: boolean;
  /**
   * Stops accepting, closes idle connections, lets requests in flight finish
   * for at most `graceMs` (default 2000), then closes every connection.
   * Calling it again returns the same promise.
   */
  close(graceMs?: number): Promise<void>;
}

/** Streams one HTTP/2 connection may have open at once (Go's default), so one client cannot hold unbounded memory. */
const DEFAULT_MAX_CONCURRENT_STREAMS = 250;
const DEFAULT_GRACE_MS = 2_000;

/** Binds a side listener. Rejects with a `ListenError` (code `CONFIG_INVALID`) on a bad address or a failed bind. */
export async function startSideListener(options: SideListenerOptions): Promise<SideListener> {
  const { name, log } = options;
  let host: string;
  let port: number;
  try {
    ({ host, port } = parseListenAddress(options.address));
  } catch (error) {
    throw new ListenError(options, options.address, error);
  }
  const served = serve(options);
  let boundPort: number;
  try {
    boundPort = (await bindListener(served.server, host, port, { name, log })).port;
  } catch (error) {
    served.drain();
    throw new ListenError(options, options.address, error);
  }
  const exposed = !isLoopbackHost(host);
  const address = `${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
  log?.debug({ listener: name, listen_addr: address, pid: process.pid }, 'Side listener bound');
  if (exposed && options.exposureWarning !== false) {
    if (options.exposureWarning === undefined) warnIfExposed(log ?? silent, options.label ?? `The ${name} listener`, host);
    else log?.warn({ listener: options.label ?? `The ${name} listener`, host, listen_addr: address }, options.exposureWarning);
  }
  let closing: Promise<void> | undefined;
  return {
    name,
    host,
    port: boundPort,
    address,
    url: `http://${address}`,
    exposed,
    close: (graceMs = DEFAULT_GRACE_MS) => (closing ??= closeGracefully(served, graceMs)),
  };
}

const silent = { warn: () => undefined };

/** The server for the protocol asked for, with what closing it needs. */
function serve(options: SideListenerOptions): H2cServer {
  const { name, log, timeouts } = options;
  if (options.http2) {
    const maxConcurrentStreams = (options.http2 === true ? undefined : options.http2.maxConcurrentStreams) ?? DEFAULT_MAX_CONCURRENT_STREAMS;
    return createH2cServer(options.handler, { name, log, timeouts, maxConcurrentStreams });
  }
  const server: HttpServer = createServer(options.handler);
  guardHttpServer(server, { name, log, timeouts });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let draining = false;
  // A connection whose answer ends while closing is idle from then on: close it instead of keeping it alive.
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.once('finish', () => {
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    server,
    sockets,
    drain() {
      draining = true;
      server.closeIdleConnections();
    },
  };
}

function closeGracefully(served: { server: NetServer; sockets: ReadonlySet<Socket>; drain(): void }, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    // Not bound (a failed start) or already closed: close reports it, nothing to wait for.
    served.server.close(() => undefined);
    served.drain();
    const done = (): void => {
      clearTimeout(timer);
      for (const socket of served.sockets) socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, graceMs);
    const check = (): void => {
      if (served.sockets.size === 0) done();
    };
    for (const socket of served.sockets) socket.once('close', check);
    check();
  });
}
