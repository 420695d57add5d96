/**
 * gRPC connections: one @grpc/grpc-js client (one HTTP/2 channel) per target,
 * shared by every fetch and every loaded graph, closed when the plugin stops.
 * Unary calls carry the fetch's deadline, its propagated headers as metadata,
 * and are cancelled when the request is aborted. Once a channel is connected
 * they start straight on its subchannel (direct-calls.ts); until then, and
 * whenever that path cannot take them, through `Channel#createCall` (not
 * `Client.makeUnaryRequest`, which adds an Error with a captured stack, an
 * event emitter and two interceptor layers per call).
 */
import { gunzip, inflate } from 'node:zlib';
import type { ChannelInterface, Client, InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import { DirectPath, frameMessage, timeoutHeader, type SubchannelCall, type SubchannelListener } from './direct-calls.js';

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
    /** The status message: the service's, or @grpc/grpc-js's or the router's for a status they made. */
    readonly details: string,
    /**
     * Whether the service sent this status (in its answer's trailers), rather
     * than the router or @grpc/grpc-js making it for a failure they observed
     * (no connection, a dropped connection, the deadline, a cancelled call).
     */
    readonly sentByService = false,
  ) {
    super(`${method}: ${GRPC_STATUS_NAMES[status] ?? `status ${status}`}${details ? `: ${details}` : ''}`);
  }

  /** `NOT_FOUND` for 5. */
  get statusName(): string {
    return GRPC_STATUS_NAMES[this.status] ?? 'UNKNOWN';
  }
}

/** A unary answer that is not one: no message, or more than one. */
export class InvalidAnswerError extends Error {
  override readonly name = 'InvalidAnswerError';
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
const RESERVED_HEADERS = new Set([
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'te',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'accept',
  'accept-encoding',
]);

/** A channel and the client that owns it. */
interface OpenChannel {
  readonly client: Client;
  readonly channel: ChannelInterface;
  /** Calls straight on its subchannel (direct-calls.ts); undefined when this @grpc/grpc-js lacks what it needs. */
  readonly direct: DirectPath | undefined;
}

/** What `GrpcChannels` is made with. */
export interface GrpcChannelsOptions {
  /** Whether calls may skip the channel's per-call layers (direct-calls.ts); default true. */
  readonly direct?: boolean;
}

/** gRPC channels by target, created on first use. */
export class GrpcChannels {
  private grpc: GrpcModule | undefined;
  private readonly channels = new Map<string, OpenChannel>();
  private readonly direct: boolean;

  constructor({ direct = true }: GrpcChannelsOptions = {}) {
    this.direct = direct;
  }

  /** Sends one unary call; resolves with the response bytes, rejects with `RpcStatusError`. */
  async call(target: string, path: string, request: Uint8Array, options: UnaryCallOptions): Promise<Buffer> {
    const grpc = (this.grpc ??= await import('@grpc/grpc-js'));
    const open = this.channels.get(target) ?? this.open(grpc, target);
    return new Promise<Buffer>((resolve, reject) => {
      const pending = new PendingCall(grpc, path.slice(path.lastIndexOf('/') + 1), options.deadline, options.signal, resolve, reject);
      if (!(open.direct && startDirect(grpc, open, open.direct, pending, path, request, options))) {
        startOnChannel(grpc, open.channel, pending, path, request, options);
      }
      pending.watchAbort();
    });
  }

  /** Calls started straight on a subchannel and through the channel, for `target` (tests). */
  pathCounts(target: string): { readonly direct: number; readonly channel: number } | undefined {
    return this.channels.get(target)?.direct?.counts;
  }

  private open(grpc: GrpcModule, target: string): OpenChannel {
    const client = new grpc.Client(target, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
    const channel = client.getChannel();
    const open: OpenChannel = { client, channel, direct: this.direct ? DirectPath.of(channel, grpc) : undefined };
    this.channels.set(target, open);
    return open;
  }

  /** Closes every channel. */
  close(): void {
    for (const { client } of this.channels.values()) client.close();
    this.channels.clear();
  }
}

/** Starts a call straight on the channel's subchannel; false when the channel has to take it. */
function startDirect(grpc: GrpcModule, open: OpenChannel, direct: DirectPath, pending: PendingCall, path: string, request: Uint8Array, options: UnaryCallOptions): boolean {
  const metadata = toMetadata(grpc, options.headers);
  metadata.set('grpc-timeout', timeoutHeader(options.deadline));
  const call = direct.start(path, metadata, frameMessage(request), pending);
  if (!call) return false;
  // A stream the service refused (RST_STREAM REFUSED_STREAM) was not processed, so it is sent once more,
  // mutations too, through the channel (which does not retry: retries are off).
  pending.runDirect(call, options.deadline, () => startOnChannel(grpc, open.channel, pending, path, request, options));
  return true;
}

/** Starts a call through the channel's own layers (what @grpc/grpc-js's clients do). */
function startOnChannel(grpc: GrpcModule, channel: ChannelInterface, pending: PendingCall, path: string, request: Uint8Array, options: UnaryCallOptions): void {
  const call = channel.createCall(path, options.deadline, undefined, null, undefined);
  pending.runOnChannel(call);
  call.start(toMetadata(grpc, options.headers), pending);
  call.sendMessageWithContext({}, Buffer.from(request.buffer, request.byteOffset, request.byteLength));
  call.halfClose();
  call.startRead();
}

/** What a pending call needs of either kind of call. */
type AnyCall = Pick<Call, 'cancelWithStatus' | 'startRead'>;

/**
 * The listener of one unary call, on a subchannel or through the channel.
 * A finished node:http2 stream, and with it @grpc/grpc-js's call objects and
 * this listener, outlives young-generation collections (in a scratch test,
 * objects hung on finished streams were promoted and waited for full
 * collections: six times as many of those). Whatever the listener still
 * referenced then (the request's abort signal, the promise's callbacks and
 * through them the request) would be copied and promoted with it, so it lets
 * go of all of it the moment the call ends.
 */
class PendingCall implements InterceptingListener, SubchannelListener {
  private settle: { resolve(response: Buffer): void; reject(error: Error): void; signal: AbortSignal } | undefined;
  private response: Buffer | undefined;
  private call: AnyCall | undefined;
  /** Set while the call runs straight on a subchannel: its messages come framed, compressed ones as the service's `grpc-encoding` says. */
  private direct: { timer: NodeJS.Timeout | undefined; retry: () => void; encoding: string | undefined } | undefined;
  /** Whether the service began its answer (sent response headers): a status after that is the service's unless the stream was reset. */
  private answered = false;
  /** Why the router ended the call itself (deadline, abort, an answer it refused): the call fails with this, not with the status it ends in. */
  private failure: Error | undefined;
  /** While a compressed answer inflates, the status that arrived meanwhile waits here. */
  private inflating: { status: StatusObject | undefined } | undefined;
  private readonly cancel = () => this.endHere(new RpcStatusError(this.method, this.grpc.status.CANCELLED, 'Cancelled on client'));

  constructor(
    private readonly grpc: GrpcModule,
    /** The RPC, e.g. `QueryGetProject`. */
    readonly method: string,
    /** The call's deadline, epoch milliseconds. */
    private readonly deadline: number,
    signal: AbortSignal,
    resolve: (response: Buffer) => void,
    reject: (error: Error) => void,
  ) {
    this.settle = { resolve, reject, signal };
  }

  runDirect(call: SubchannelCall, deadline: number, retry: () => void): void {
    this.call = call;
    const left = Math.max(0, deadline - Date.now());
    // As @grpc/grpc-js: no timer for a deadline beyond what setTimeout can hold (about 24.8 days).
    const timer = left <= MAX_TIMER_MS ? setTimeout(() => this.endHere(new RpcStatusError(this.method, this.grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded')), left) : undefined;
    this.direct = { timer, retry, encoding: undefined };
  }

  runOnChannel(call: Call): void {
    this.call = call;
    this.direct = undefined;
  }

  /** Cancels the call when the request is aborted (at once if it already is). */
  watchAbort(): void {
    const signal = this.settle?.signal;
    if (!signal) return;
    if (signal.aborted) this.cancel();
    else signal.addEventListener('abort', this.cancel, { once: true });
  }

  /** Ends the call from the router's side; it fails with `failure` (the first reason given). */
  private endHere(failure: Error): void {
    this.failure ??= failure;
    const status = failure instanceof RpcStatusError ? failure.status : this.grpc.status.CANCELLED;
    this.call?.cancelWithStatus(status, failure.message);
  }

  onReceiveMetadata(metadata: Metadata): void {
    this.answered = true;
    if (this.direct) this.direct.encoding = metadata.get('grpc-encoding')[0]?.toString();
  }

  onReceiveMessage(message: Buffer): void {
    if (this.response !== undefined || this.inflating) return this.endHere(new InvalidAnswerError(`${this.method} answered with more than one message`));
    if (!this.direct || message[0] === 0) {
      // Straight from the subchannel the 5-byte frame header is still on; through the channel it is gone.
      this.response = this.direct ? message.subarray(5) : message;
      // Read on: the call ends with the trailers, and a second message must be seen to be refused (else the call waits for its deadline).
      this.call?.startRead();
      return;
    }
    // Compressed, and no filter has inflated it: inflated off the event loop, as the status may arrive meanwhile.
    const inflating: { status: StatusObject | undefined } = { status: undefined };
    this.inflating = inflating;
    this.call?.startRead();
    inflateAnswer(message, this.direct.encoding, (error, payload) => {
      this.inflating = undefined;
      if (error) {
        // As @grpc/grpc-js: an answer that inflates past the size limit is RESOURCE_EXHAUSTED.
        const tooLarge = (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
        const status = tooLarge ? this.grpc.status.RESOURCE_EXHAUSTED : this.grpc.status.INTERNAL;
        this.endHere(new RpcStatusError(this.method, status, tooLarge ? `Received message that decompresses to a size larger than ${MAX_MESSAGE_BYTES}` : error.message));
      } else this.response = payload;
      if (inflating.status) this.onReceiveStatus(inflating.status);
    });
  }

  /** Sends the call again through the channel; ends it as UNAVAILABLE when the channel cannot take it (closed meanwhile). */
  private retry(start: () => void): void {
    const grpc = this.grpc;
    if (this.settle?.signal.aborted) return this.onReceiveStatus({ code: grpc.status.CANCELLED, details: 'Cancelled on client', metadata: new grpc.Metadata() });
    try {
      start();
    } catch (error) {
      this.onReceiveStatus({ code: grpc.status.UNAVAILABLE, details: `Refused by the service, and not sent again: ${(error as Error).message}`, metadata: new grpc.Metadata() });
    }
  }

  onReceiveStatus(status: StatusObject & { readonly rstCode?: number }): void {
    if (this.inflating) {
      this.inflating.status = status;
      return;
    }
    const direct = this.direct;
    if (direct) {
      clearTimeout(direct.timer);
      this.direct = undefined;
      if (status.rstCode === REFUSED_STREAM && this.response === undefined && this.failure === undefined && this.settle) return this.retry(direct.retry);
    }
    const { settle, response, failure } = this;
    this.settle = undefined;
    this.response = undefined;
    this.failure = undefined;
    this.call = undefined;
    if (!settle) return;
    settle.signal.removeEventListener('abort', this.cancel);
    const { grpc, method } = this;
    if (failure) settle.reject(failure);
    else if (status.code !== grpc.status.OK) settle.reject(new RpcStatusError(method, status.code, status.details, this.sentByService(status)));
    else if (response === undefined) settle.reject(new InvalidAnswerError(`${method} answered with no message`));
    else settle.resolve(response);
  }

  /**
   * Whether the service sent `status`, rather than @grpc/grpc-js making it:
   * the service sent an answer head first (response headers, or a
   * trailers-only answer, which by the gRPC protocol carries its
   * content-type), and the stream was not reset (@grpc/grpc-js reports a
   * reset or dropped connection with the `rstCode`). Connection failures,
   * before or during the call, and the channel's deadline are made by
   * @grpc/grpc-js and are the router's own; the router's own ends of the
   * call (its deadline, a cancelled request) never get here.
   */
  private sentByService(status: StatusObject & { readonly rstCode?: number }): boolean {
    if (status.rstCode !== undefined) return false;
    // The channel's own deadline ends the call at the deadline; a service reporting a timeout of its own does so before it.
    if (status.code === this.grpc.status.DEADLINE_EXCEEDED && Date.now() + DEADLINE_SLACK_MS >= this.deadline) return false;
    return this.answered || (status.metadata?.get('content-type').length ?? 0) > 0;
  }
}

/**
 * Inflates a framed compressed answer. The router offers no compression, but
 * a service may compress anyway: as @grpc/grpc-js's compression filter does,
 * gzip and deflate are read, with the receive size limit after inflating,
 * on zlib's thread pool (a small answer inflating to 64 MiB takes the CPU
 * for half a second).
 */
function inflateAnswer(framed: Buffer, encoding: string | undefined, done: (error: Error | null, payload: Buffer) => void): void {
  const payload = framed.subarray(5);
  const options = { maxOutputLength: MAX_MESSAGE_BYTES };
  if (encoding === 'gzip') return gunzip(payload, options, done);
  if (encoding === 'deflate') return inflate(payload, options, done);
  const error = new Error(`Received a compressed message with grpc-encoding "${encoding ?? 'identity'}", which the router cannot read`);
  process.nextTick(done, error, payload);
}

/** The longest delay setTimeout takes (2^31 - 1 ms); longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** How early @grpc/grpc-js's deadline timer may fire by the wall clock (timers run on the monotonic clock). */
const DEADLINE_SLACK_MS = 20;

/** NGHTTP2_REFUSED_STREAM: the service did not start on the stream, so sending it again is safe. */
const REFUSED_STREAM = 7;

function toMetadata(grpc: GrpcModule, headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) {
    if (RESERVED_HEADERS.has(name) || name.startsWith(':') || name.startsWith('grpc-') || name.endsWith('-bin')) continue;
    metadata.set(name, value);
  }
  return metadata;
}
