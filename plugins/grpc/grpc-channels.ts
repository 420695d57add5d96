/**
 * gRPC connections: one @grpc/grpc-js client (one HTTP/2 channel) per target,
 * shared by every fetch and every loaded graph, closed when the plugin stops.
 * Unary calls carry the fetch's deadline, its propagated headers as metadata,
 * and are cancelled when the request is aborted.
 */
import type { ChannelInterface, Client, InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';

type GrpcModule = typeof import('@grpc/grpc-js');

/** A call made straight on a channel. */
type Call = ReturnType<ChannelInterface['createCall']>;

/** Largest response message accepted, as the HTTP transport's body limit: 64 MiB. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * HTTP/2 flow-control window of each call and of the connection. The default,
 * 64 KiB for the whole connection, holds six 10 KB answers: with more calls in
 * flight the service stalls until the router's event loop gets round to
 * sending WINDOW_UPDATE, which under load costs more than the calls themselves.
 */
export const FLOW_CONTROL_WINDOW_BYTES = 16 * 1024 * 1024;

/** Options of every channel the router opens (@grpc/grpc-js channel arguments). */
export const GRPC_CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.keepalive_time_ms': 60_000,
  'grpc.enable_retries': 0,
  'grpc.enable_channelz': 0,
  // grpc-js backs off up to 120 s between reconnects; a service back after a long outage should serve within seconds.
  'grpc.max_reconnect_backoff_ms': 10_000,
  'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW_BYTES,
} as const;

/** Status names by gRPC status code. */
export const GRPC_STATUS_NAMES: readonly string[] = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** A call that ended with a gRPC status other than OK. */
export class RpcStatusError extends Error {
  override readonly name = 'RpcStatusError';
  constructor(
    /** The RPC, e.g. `QueryGetProject`. */
    readonly method: string,
    /** gRPC status code, e.g. 5. */
    readonly status: number,
    /** The service's message (status details). */
    readonly details: string,
  ) {
    super(`${method}: ${GRPC_STATUS_NAMES[status] ?? `status ${status}`}${details ? `: ${details}` : ''}`);
  }

  /** `NOT_FOUND` for 5. */
  get statusName(): string {
    return GRPC_STATUS_NAMES[this.status] ?? 'UNKNOWN';
  }
}

/** What a unary call is sent with. */
export interface UnaryCallOptions {
  /** Absolute deadline, epoch milliseconds. */
  readonly deadline: number;
  /** Headers to send as metadata (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

// Headers that belong to HTTP/1 or to the gRPC protocol itself, never forwarded as metadata.
const RESERVED_HEADERS = new Set(['connection', 'content-length', 'content-type', 'host', 'keep-alive', 'te', 'transfer-encoding', 'upgrade', 'user-agent', 'accept', 'accept-encoding']);

/** gRPC channels by target, created on first use. */
export class GrpcChannels {
  private grpc: GrpcModule | undefined;
  private readonly clients = new Map<string, Client>();
  private readonly channels = new Map<string, ChannelInterface>();

  /** Sends one unary call; resolves with the response bytes, rejects with `RpcStatusError`. */
  async call(target: string, path: string, request: Uint8Array, options: UnaryCallOptions): Promise<Buffer> {
    const grpc = (this.grpc ??= await import('@grpc/grpc-js'));
    const channel = this.channels.get(target) ?? this.open(grpc, target);
    const metadata = toMetadata(grpc, options.headers);
    // Straight on the channel: Client.makeUnaryRequest adds, per call, an Error
    // (a captured stack), an event emitter and two interceptor layers, none of
    // which a router without interceptors uses.
    const call = channel.createCall(path, options.deadline, undefined, null, undefined);
    return new Promise<Buffer>((resolve, reject) => {
      const pending = new PendingCall(grpc, call, path.slice(path.lastIndexOf('/') + 1), options.signal, resolve, reject);
      call.start(metadata, pending);
      call.sendMessageWithContext({}, Buffer.from(request.buffer, request.byteOffset, request.byteLength));
      call.halfClose();
      call.startRead();
      pending.watchAbort();
    });
  }

  private open(grpc: GrpcModule, target: string): ChannelInterface {
    const client = new grpc.Client(target, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
    const channel = client.getChannel();
    this.clients.set(target, client);
    this.channels.set(target, channel);
    return channel;
  }

  /** Closes every channel. */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
    this.channels.clear();
  }
}

/**
 * The listener of one unary call. A finished node:http2 stream, and with it
 * @grpc/grpc-js's call objects and this listener, outlives young-generation
 * collections (in a scratch test, objects hung on finished streams were
 * promoted and waited for full collections: six times as many of those).
 * Whatever the listener still referenced then (the request's abort signal,
 * the promise's callbacks and through them the request) would be copied and
 * promoted with it, so it lets go of all of it the moment the call ends.
 */
class PendingCall implements InterceptingListener {
  private settle: { resolve(response: Buffer): void; reject(error: Error): void; signal: AbortSignal } | undefined;
  private response: Buffer | undefined;
  private readonly cancel: () => void;
  /** A unary call answers with one message; a second ends it. */
  private readonly refuseExtra: () => void;

  constructor(
    private readonly grpc: GrpcModule,
    call: Call,
    /** The RPC, e.g. `QueryGetProject`. */
    private readonly method: string,
    signal: AbortSignal,
    resolve: (response: Buffer) => void,
    reject: (error: Error) => void,
  ) {
    this.settle = { resolve, reject, signal };
    this.cancel = () => call.cancelWithStatus(grpc.status.CANCELLED, 'Cancelled on client');
    this.refuseExtra = () => call.cancelWithStatus(grpc.status.UNIMPLEMENTED, 'Too many responses received');
  }

  /** Cancels the call when the request is aborted (at once if it already is). */
  watchAbort(): void {
    const signal = this.settle?.signal;
    if (!signal) return;
    if (signal.aborted) this.cancel();
    else signal.addEventListener('abort', this.cancel, { once: true });
  }

  onReceiveMetadata(): void {}

  onReceiveMessage(message: Buffer): void {
    if (this.response !== undefined) this.refuseExtra();
    else this.response = message;
  }

  onReceiveStatus(status: StatusObject): void {
    const settle = this.settle;
    const response = this.response;
    this.settle = undefined;
    this.response = undefined;
    if (!settle) return;
    settle.signal.removeEventListener('abort', this.cancel);
    const { grpc, method } = this;
    if (status.code !== grpc.status.OK) settle.reject(new RpcStatusError(method, status.code, status.details));
    else if (response === undefined) settle.reject(new RpcStatusError(method, grpc.status.UNIMPLEMENTED, 'No message received'));
    else settle.resolve(response);
  }
}

function toMetadata(grpc: GrpcModule, headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) {
    if (RESERVED_HEADERS.has(name) || name.startsWith(':') || name.startsWith('grpc-') || name.endsWith('-bin')) continue;
    metadata.set(name, value);
  }
  return metadata;
}
