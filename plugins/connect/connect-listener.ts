/**
 * The Connect listener: one plain-text port that speaks HTTP/1.1 and
 * HTTP/2 (h2c with prior knowledge), from the kernel's side-listener
 * facility. curl, browsers and Connect clients use either; gRPC needs
 * HTTP/2. Hostile connections are bounded by the kernel's listener guard.
 */
import { startSideListener, type DualProtocolHandler, type ListenerTimeouts, type Logger } from '../../src/index.js';

/** A running listener. */
export interface ConnectListener {
  /** `http://host:port` */
  readonly url: string;
  /** `host:port` it is bound to (the real port when 0 was asked). */
  readonly address: string;
  /** Stops accepting, lets in-flight calls finish (at most `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/** Options of `startConnectListener`. */
export interface ConnectListenerOptions {
  /** Where bad connections are logged (debug). */
  readonly log?: Logger;
  /** Bounds to use instead of the kernel's side-listener defaults (tests shorten them). */
  readonly timeouts?: Partial<ListenerTimeouts>;
}

/** Streams one HTTP/2 connection may have open at once (Go's default), so one client cannot hold unbounded memory. */
const MAX_CONCURRENT_STREAMS = 250;

/** Starts listening on `listenAddr`. Rejects with `CONFIG_INVALID` when the address cannot be bound. */
export async function startConnectListener(listenAddr: string, handler: DualProtocolHandler, options: ConnectListenerOptions = {}): Promise<ConnectListener> {
  const listener = await startSideListener({
    name: 'connect',
    plugin: 'connect',
    address: listenAddr,
    configKey: 'connect_rpc.server.listen_addr',
    purpose: 'the Connect endpoints',
    // A public API like /graphql: reachable beyond loopback on purpose, so no warning.
    exposureWarning: false,
    http2: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS },
    handler,
    log: options.log,
    timeouts: options.timeouts,
  });
  return { url: listener.url, address: listener.address, close: (graceMs) => listener.close(graceMs) };
}
