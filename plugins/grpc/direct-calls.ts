/**
 * Unary calls made straight on the subchannel a @grpc/grpc-js channel has
 * connected, beneath the channel's per-call layers.
 *
 * Why: `Channel#createCall` runs every call through a resolving call (service
 * config, a deadline timer, a filter stack), a retrying call (a message
 * buffer, even with retries off), a load-balancing call (a pick and a
 * credentials promise) and a second filter stack (compression, promise per
 * message), each with its own closures and microtask hops. A router uses
 * none of them: retries are off, calls are uncompressed, there are no call
 * credentials or interceptors, and the channel picks its one ready
 * subchannel. Under load those layers cost more than the HTTP/2 call itself:
 * on a bare client 205-410 us of CPU per call through them, 100-149 us
 * straight on the subchannel, 87-110 us for a bare node:http2 request
 * (docs/grpc.md, "Performance"). The subchannel call is still @grpc/grpc-js's:
 * its HTTP/2 session, flow control, message decoder (with the receive size
 * limit), trailers and status mapping, keepalive and reconnection.
 *
 * What the layers did that this path does itself: the `grpc-timeout` header
 * and a timer for the deadline; framing the request, and reading a gzip or
 * deflate answer (none is offered: no `grpc-accept-encoding` is sent);
 * keeping the channel out of its idle state. One thing it does that the
 * channel does not with retries off: a stream the service refused before
 * reading it (RST_STREAM REFUSED_STREAM) is sent once more, through the
 * channel.
 *
 * These are @grpc/grpc-js internals (not in its typings): the channel's
 * `internalChannel`, its `doPick` and `defaultAuthority`, and the picked
 * subchannel's `getRealSubchannel().createCall`. `DirectPath.of` checks them
 * when a channel opens, and a call goes through `Channel#createCall` as
 * before whenever they are missing, the channel is not ready, the pick asks
 * for load reporting, or the subchannel refuses the call. Since that
 * fallback is silent, test/plugins/grpc/grpc-js-internals.test.ts checks
 * each of them on a real channel and names the one that changed; the
 * version is pinned to a patch range (package.json) for the same reason.
 * The values compared are @grpc/grpc-js's public enums.
 */
import type { ChannelInterface, Metadata, StatusObject, connectivityState as ConnectivityState, experimental, status as Status } from '@grpc/grpc-js';

/** The public enums of @grpc/grpc-js this path compares against (the loaded module has them). */
export type GrpcEnums = {
  readonly connectivityState: typeof ConnectivityState;
  readonly experimental: { readonly PickResultType: typeof experimental.PickResultType };
};

/** What a subchannel call reports (@grpc/grpc-js's SubchannelCallInterceptingListener). */
export interface SubchannelListener {
  onReceiveMetadata(metadata: Metadata): void;
  /** The message with its 5-byte gRPC frame header. */
  onReceiveMessage(framed: Buffer): void;
  onReceiveStatus(status: StatusObject & { readonly rstCode?: number }): void;
}

/** A call on a subchannel (@grpc/grpc-js's SubchannelCall). */
export interface SubchannelCall {
  sendMessageWithContext(context: object, message: Buffer): void;
  halfClose(): void;
  startRead(): void;
  cancelWithStatus(status: Status, details: string): void;
}

interface RealSubchannel {
  createCall(metadata: Metadata, host: string, method: string, listener: SubchannelListener): SubchannelCall;
}

interface PickedSubchannel {
  getRealSubchannel(): RealSubchannel;
  getConnectivityState(): ConnectivityState;
}

interface PickResult {
  pickResultType: experimental.PickResultType;
  subchannel: PickedSubchannel | null;
  onCallStarted: unknown;
  onCallEnded: unknown;
}

interface InternalChannel {
  doPick(metadata: Metadata, extraPickInfo: Record<string, string>): PickResult;
  defaultAuthority: string;
}

/** How often a busy direct path tells the channel it is in use (its idle timer counts only its own calls). */
const ACTIVITY_INTERVAL_MS = 1_000;

/** Starts calls straight on one channel's ready subchannel. */
export class DirectPath {
  private lastActivity = 0;
  /** Calls started on a subchannel, and calls that went through the channel instead (for tests). */
  readonly counts = { direct: 0, channel: 0 };

  private readonly pickComplete: experimental.PickResultType;
  private readonly ready: ConnectivityState;

  private constructor(
    private readonly channel: ChannelInterface,
    private readonly internal: InternalChannel,
    enums: GrpcEnums,
  ) {
    this.pickComplete = enums.experimental.PickResultType.COMPLETE;
    this.ready = enums.connectivityState.READY;
  }

  /**
   * Starts `method` with `metadata` on the picked subchannel, with the
   * request framed; returns the call, or undefined when the channel has to
   * take it (not ready, load reporting, a refused call).
   */
  start(method: string, metadata: Metadata, framedRequest: Buffer, listener: SubchannelListener): SubchannelCall | undefined {
    const now = Date.now();
    if (now - this.lastActivity >= ACTIVITY_INTERVAL_MS) {
      this.lastActivity = now;
      this.channel.getConnectivityState(true);
    }
    let call: SubchannelCall;
    try {
      const pick = this.internal.doPick(metadata, {});
      const subchannel = pick.subchannel;
      if (pick.pickResultType !== this.pickComplete || !subchannel || pick.onCallStarted || pick.onCallEnded || subchannel.getConnectivityState() !== this.ready) {
        this.counts.channel++;
        return undefined;
      }
      call = subchannel.getRealSubchannel().createCall(metadata, this.internal.defaultAuthority, method, listener);
    } catch {
      // The transport went away between the pick and the call: the channel queues and reconnects.
      this.counts.channel++;
      return undefined;
    }
    this.counts.direct++;
    call.sendMessageWithContext({}, framedRequest);
    call.halfClose();
    call.startRead();
    return call;
  }

  /**
   * The direct path of `channel`, or undefined when this @grpc/grpc-js does
   * not have the internals it needs. `grpc` is the loaded @grpc/grpc-js
   * (for its enums: this module does not load it; grpc-channels.ts does, on
   * the first call).
   */
  static of(channel: ChannelInterface, grpc: GrpcEnums): DirectPath | undefined {
    if (missingInternals(channel).length > 0) return undefined;
    return new DirectPath(channel, (channel as unknown as { internalChannel: InternalChannel }).internalChannel, grpc);
  }
}

/** The channel internals `DirectPath.of` checks, by the name they have in @grpc/grpc-js; those `channel` lacks (none: it has them all). */
export function missingInternals(channel: ChannelInterface): string[] {
  const internal = (channel as unknown as { internalChannel?: Partial<InternalChannel> }).internalChannel;
  if (typeof internal !== 'object' || internal === null) return ['Channel#internalChannel'];
  const missing: string[] = [];
  if (typeof internal.doPick !== 'function') missing.push('InternalChannel#doPick()');
  if (typeof internal.defaultAuthority !== 'string') missing.push('InternalChannel#defaultAuthority');
  return missing;
}

/** A request message in gRPC's length-prefixed framing, not compressed. */
export function frameMessage(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(5 + message.byteLength);
  framed[0] = 0;
  framed.writeUInt32BE(message.byteLength, 1);
  framed.set(message, 5);
  return framed;
}

/** The `grpc-timeout` header for an absolute deadline (milliseconds, at most 8 digits as the spec allows). */
export function timeoutHeader(deadline: number, now = Date.now()): string {
  const ms = Math.max(1, Math.ceil(deadline - now));
  if (ms < 100_000_000) return `${ms}m`;
  return `${Math.min(Math.ceil(ms / 1000), 99_999_999)}S`;
}
