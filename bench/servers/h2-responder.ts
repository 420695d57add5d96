/**
 * A minimal unary gRPC server on HTTP/2 with prior knowledge (h2c), written
 * straight on a TCP socket: the bench's counterpart of a gRPC service in Go,
 * Rust or Java, which sends each answer the moment it is ready.
 *
 * Why not node:http2's server: it parses every call of a read before it
 * answers any, and it sends its answers only once per event-loop turn (the
 * session flushes in a `setImmediate`). A router sends a burst of calls at
 * once (its own HTTP/2 session flushes the same way), so the service took
 * the whole burst in, at about 60 us a call, before the first answer left,
 * and the router sat idle meanwhile: 6-7% of its time, against 0.5% with
 * the HTTP subgraph, whose node:http server answers each request on its own
 * (docs/grpc.md, "Performance"). This server answers each call as soon as
 * its request message is complete, with one socket write, as the HTTP
 * subgraph does.
 *
 * What it does: the connection preface, SETTINGS (checked, and
 * acknowledged), PING replies, WINDOW_UPDATE both ways (the peer's windows
 * bound what it sends; answers wait for window), DATA split at the peer's
 * largest frame size, RST_STREAM, a graceful close after the peer's GOAWAY,
 * and GOAWAY with the error code for what breaks the protocol. What it
 * leaves out: header blocks are not decoded (HPACK), so it answers every
 * call on the connection with `answer` whatever the method; no TLS, no
 * server push, no compression (h2-frames.ts has the frames it writes).
 */
import { createServer, type Server, type Socket } from 'node:net';
import {
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ErrorCode,
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FrameType,
  MAX_FRAME_LIMIT,
  MAX_WINDOW,
  OK_TRAILERS,
  RESPONSE_HEADERS,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_FRAME_SIZE,
  STATUS_INVALID_ARGUMENT,
  STATUS_RESOURCE_EXHAUSTED,
  TABLE_SIZE_ZERO,
  frame,
  statusOnly,
  uint32Frame,
  wholeAnswer,
} from './h2-frames.js';
import { cachedFrame, unframe } from './grpc-frame.js';

/** What a call is answered with: a message, or a status other than OK. */
export type UnaryAnswer = { readonly message: Uint8Array } | { readonly status: number; readonly details: string };

/** What the server does with calls. */
export interface H2ResponderOptions {
  /** The answer to one request message (the bytes inside the gRPC frame). */
  answer(request: Buffer): UnaryAnswer;
  /** Called once per call received. */
  onCall?: () => void;
  /** Receive window of the connection and of each stream; default 16 MiB (65,535 to 2^31 - 1). */
  windowBytes?: number;
  /** Largest request (framed message) accepted, below `windowBytes`; default 4 MiB (RESOURCE_EXHAUSTED beyond). */
  maxRequestBytes?: number;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Largest frame this side accepts (its SETTINGS_MAX_FRAME_SIZE, left at the default). */
const MAX_INBOUND_FRAME = DEFAULT_MAX_FRAME;

/** One call's request as it arrives, and its answer while it waits for window. */
interface Stream {
  readonly chunks: Buffer[];
  received: number;
  /** What the peer lets this side send on the stream. */
  sendWindow: number;
  /** Answer bytes (the gRPC frame) not sent yet, then the trailers. */
  pending?: { data: Buffer; trailers: Buffer };
}

/** Serves one connection. */
class Connection {
  private buffered: Buffer = Buffer.alloc(0);
  private prefaceSeen = false;
  /** Set once this side gave up on the connection: nothing more is read. */
  private closed = false;
  /** Set by the peer's GOAWAY: the connection closes once its streams are done. */
  private goingAway = false;
  private readonly streams = new Map<number, Stream>();
  /** Highest stream the peer opened (GOAWAY's last stream). */
  private lastStreamId = 0;
  /** Streams with an answer waiting for window, in arrival order. */
  private readonly waiting = new Set<number>();
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  private connectionSendWindow = DEFAULT_WINDOW;
  /** DATA bytes taken in since the last connection WINDOW_UPDATE. */
  private unacknowledged = 0;
  /** Stream whose header block is still open (CONTINUATION follows). */
  private headersOpen: { id: number; endStream: boolean } | undefined;
  /** Whether a header block went out yet: the first one starts with a table size update. */
  private headerBlockSent = false;

  constructor(
    private readonly socket: Socket,
    private readonly options: Required<H2ResponderOptions>,
  ) {
    socket.setNoDelay(true);
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 0);
    settings.writeUInt32BE(options.windowBytes, 2);
    const opening = [frame(FrameType.Settings, 0, 0, settings)];
    if (options.windowBytes > DEFAULT_WINDOW) opening.push(uint32Frame(FrameType.WindowUpdate, 0, options.windowBytes - DEFAULT_WINDOW));
    socket.write(Buffer.concat(opening));
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => socket.destroy());
  }

  private read(chunk: Buffer): void {
    if (this.closed) return;
    let input = this.buffered.length > 0 ? Buffer.concat([this.buffered, chunk]) : chunk;
    if (!this.prefaceSeen) {
      if (input.length < PREFACE.length) {
        this.buffered = input;
        return;
      }
      if (!input.subarray(0, PREFACE.length).equals(PREFACE)) return this.fail(ErrorCode.Protocol, 'no HTTP/2 connection preface');
      this.prefaceSeen = true;
      input = input.subarray(PREFACE.length);
    }
    let offset = 0;
    while (input.length - offset >= 9) {
      const length = input.readUIntBE(offset, 3);
      if (length > MAX_INBOUND_FRAME) return this.fail(ErrorCode.FrameSize, `a frame of ${length} bytes exceeds SETTINGS_MAX_FRAME_SIZE`);
      if (input.length - offset < 9 + length) break;
      const type = input[offset + 3]!;
      const flags = input[offset + 4]!;
      const streamId = input.readUInt32BE(offset + 5) & 0x7fffffff;
      const payload = input.subarray(offset + 9, offset + 9 + length);
      offset += 9 + length;
      if (this.headersOpen && type !== FrameType.Continuation) return this.fail(ErrorCode.Protocol, 'a header block was interrupted');
      this.onFrame(type, flags, streamId, payload);
      if (this.closed) return;
    }
    // Keep a copy of the tail only: the chunk may be a view of a larger buffer.
    this.buffered = offset < input.length ? Buffer.from(input.subarray(offset)) : Buffer.alloc(0);
  }

  private onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    const onStream = type === FrameType.Data || type === FrameType.Headers || type === FrameType.Continuation || type === FrameType.RstStream;
    if (onStream && streamId === 0) return this.fail(ErrorCode.Protocol, `frame type ${type} on stream 0`);
    switch (type) {
      case FrameType.Settings:
        if (!(flags & FLAG_ACK)) this.onSettings(payload);
        return;
      case FrameType.Ping:
        if (payload.length !== 8) return this.fail(ErrorCode.FrameSize, 'PING payload is not 8 bytes');
        if (!(flags & FLAG_ACK)) this.socket.write(frame(FrameType.Ping, FLAG_ACK, 0, payload));
        return;
      case FrameType.WindowUpdate:
        return this.onWindowUpdate(streamId, payload);
      case FrameType.Headers:
        // A second header block on a stream would be the client's trailers: the request ends there.
        if (!this.streams.has(streamId)) {
          this.streams.set(streamId, { chunks: [], received: 0, sendWindow: this.peerInitialWindow });
          this.lastStreamId = Math.max(this.lastStreamId, streamId);
        }
        if (flags & FLAG_END_HEADERS) {
          if (flags & FLAG_END_STREAM) this.onRequestEnd(streamId);
        } else {
          this.headersOpen = { id: streamId, endStream: (flags & FLAG_END_STREAM) !== 0 };
        }
        return;
      case FrameType.Continuation:
        if (!this.headersOpen || this.headersOpen.id !== streamId) return this.fail(ErrorCode.Protocol, 'CONTINUATION without an open header block');
        if (flags & FLAG_END_HEADERS) {
          const { endStream } = this.headersOpen;
          this.headersOpen = undefined;
          if (endStream) this.onRequestEnd(streamId);
        }
        return;
      case FrameType.Data:
        return this.onData(flags, streamId, payload);
      case FrameType.RstStream:
        this.streams.delete(streamId);
        this.waiting.delete(streamId);
        return this.closeIfDone();
      case FrameType.Goaway:
        this.goingAway = true;
        return this.closeIfDone();
      default:
        // PRIORITY and unknown frame types are ignored (RFC 9113, 4.1 and 5.5).
        return;
    }
  }

  private onSettings(payload: Buffer): void {
    if (payload.length % 6 !== 0) return this.fail(ErrorCode.FrameSize, 'SETTINGS payload is not a multiple of 6 bytes');
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) return this.fail(ErrorCode.FlowControl, `SETTINGS_INITIAL_WINDOW_SIZE ${value} is above 2^31 - 1`);
        // A new initial window changes every open stream's window by the difference (RFC 9113, 6.9.2).
        for (const stream of this.streams.values()) stream.sendWindow += value - this.peerInitialWindow;
        this.peerInitialWindow = value;
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > MAX_FRAME_LIMIT) return this.fail(ErrorCode.Protocol, `SETTINGS_MAX_FRAME_SIZE ${value} is out of range`);
        this.peerMaxFrame = value;
      }
    }
    this.socket.write(frame(FrameType.Settings, FLAG_ACK, 0, Buffer.alloc(0)));
    this.sendWaiting();
  }

  private onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) return this.fail(ErrorCode.FrameSize, 'WINDOW_UPDATE payload is not 4 bytes');
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) {
      if (increment === 0) return this.fail(ErrorCode.Protocol, 'WINDOW_UPDATE of 0 on the connection');
      if (this.connectionSendWindow + increment > MAX_WINDOW) return this.fail(ErrorCode.FlowControl, 'the connection window went above 2^31 - 1');
      this.connectionSendWindow += increment;
    } else {
      const stream = this.streams.get(streamId);
      if (!stream) return;
      // A stream error (RFC 9113, 6.9 and 6.9.1): the stream is reset, the connection goes on.
      if (increment === 0) return this.resetStream(streamId, ErrorCode.Protocol);
      if (stream.sendWindow + increment > MAX_WINDOW) return this.resetStream(streamId, ErrorCode.FlowControl);
      stream.sendWindow += increment;
    }
    this.sendWaiting();
  }

  private onData(flags: number, streamId: number, payload: Buffer): void {
    this.unacknowledged += payload.length;
    if (this.unacknowledged >= this.options.windowBytes / 2) {
      this.socket.write(uint32Frame(FrameType.WindowUpdate, 0, this.unacknowledged));
      this.unacknowledged = 0;
    }
    const stream = this.streams.get(streamId);
    if (!stream) return;
    let body = payload;
    if (flags & FLAG_PADDED) {
      const padding = payload[0] ?? 0;
      if (padding >= payload.length) return this.fail(ErrorCode.Protocol, 'DATA padding longer than the frame');
      body = payload.subarray(1, payload.length - padding);
    }
    stream.received += body.length;
    if (stream.received > this.options.maxRequestBytes) {
      // Answered before the request is complete, then the rest refused (RFC 9113, 8.1): the stream's window cannot fill up.
      this.options.onCall();
      this.answerStatus(streamId, STATUS_RESOURCE_EXHAUSTED, `request message larger than ${this.options.maxRequestBytes} bytes`);
      this.socket.write(uint32Frame(FrameType.RstStream, streamId, ErrorCode.NoError));
      return;
    }
    stream.chunks.push(Buffer.from(body));
    if (flags & FLAG_END_STREAM) this.onRequestEnd(streamId);
  }

  /** The request is complete: answer it now, or as far as the peer's windows allow. */
  private onRequestEnd(streamId: number): void {
    const stream = this.streams.get(streamId);
    if (!stream) return;
    this.options.onCall();
    const answer = this.answerFor(stream);
    if ('status' in answer) return this.answerStatus(streamId, answer.status, answer.details);
    const data = cachedFrame(answer.message);
    // The usual case: the whole answer fits the windows and one frame, and leaves in one write.
    if (this.headerBlockSent && data.length <= this.peerMaxFrame && data.length <= stream.sendWindow && data.length <= this.connectionSendWindow) {
      this.streams.delete(streamId);
      this.connectionSendWindow -= data.length;
      this.socket.write(wholeAnswer(data, streamId));
      return this.closeIfDone();
    }
    stream.pending = { data, trailers: OK_TRAILERS };
    this.socket.cork();
    this.socket.write(frame(FrameType.Headers, FLAG_END_HEADERS, streamId, this.headerBlock(RESPONSE_HEADERS)));
    this.sendPending(streamId, stream);
    this.socket.uncork();
  }

  /** Ends a stream with a status and no message ("trailers-only"). */
  private answerStatus(streamId: number, status: number, details: string): void {
    this.streams.delete(streamId);
    this.waiting.delete(streamId);
    this.socket.write(frame(FrameType.Headers, FLAG_END_HEADERS | FLAG_END_STREAM, streamId, this.headerBlock(statusOnly(status, details))));
    this.closeIfDone();
  }

  private answerFor(stream: Stream): UnaryAnswer {
    const body = stream.chunks.length === 1 ? stream.chunks[0]! : Buffer.concat(stream.chunks);
    try {
      return this.options.answer(unframe(body, 'the request'));
    } catch (error) {
      return { status: STATUS_INVALID_ARGUMENT, details: (error as Error).message };
    }
  }

  /** A header block as sent: the connection's first one starts with the table size update. */
  private headerBlock(block: Buffer): Buffer {
    if (this.headerBlockSent) return block;
    this.headerBlockSent = true;
    return Buffer.concat([TABLE_SIZE_ZERO, block]);
  }

  /** Sends what the windows allow of a stream's answer; the trailers once all of it is out. */
  private sendPending(streamId: number, stream: Stream): void {
    const pending = stream.pending;
    if (!pending) return;
    while (pending.data.length > 0) {
      const size = Math.min(pending.data.length, this.peerMaxFrame, stream.sendWindow, this.connectionSendWindow);
      if (size <= 0) {
        this.waiting.add(streamId);
        return;
      }
      this.socket.write(frame(FrameType.Data, 0, streamId, pending.data.subarray(0, size)));
      pending.data = pending.data.subarray(size);
      stream.sendWindow -= size;
      this.connectionSendWindow -= size;
    }
    this.socket.write(frame(FrameType.Headers, FLAG_END_HEADERS | FLAG_END_STREAM, streamId, this.headerBlock(pending.trailers)));
    this.streams.delete(streamId);
    this.waiting.delete(streamId);
    this.closeIfDone();
  }

  private sendWaiting(): void {
    for (const streamId of [...this.waiting]) {
      const stream = this.streams.get(streamId);
      if (stream) this.sendPending(streamId, stream);
      else this.waiting.delete(streamId);
      if (this.connectionSendWindow <= 0) return;
    }
  }

  private resetStream(streamId: number, code: ErrorCode): void {
    this.streams.delete(streamId);
    this.waiting.delete(streamId);
    this.socket.write(uint32Frame(FrameType.RstStream, streamId, code));
    this.closeIfDone();
  }

  /** After the peer's GOAWAY, the connection ends once its last stream is answered. */
  private closeIfDone(): void {
    if (this.goingAway && this.streams.size === 0 && !this.closed) {
      this.closed = true;
      this.socket.end();
    }
  }

  /** A connection error: GOAWAY with its code and reason, then close (RFC 9113, 5.4.1). */
  private fail(code: ErrorCode, reason: string): void {
    this.closed = true;
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(this.lastStreamId, 0);
    payload.writeUInt32BE(code, 4);
    this.socket.end(frame(FrameType.Goaway, 0, 0, Buffer.concat([payload, Buffer.from(reason, 'utf8')])));
    this.socket.destroySoon();
  }
}

/** Starts the server on a free loopback port; resolves with it and its port. */
export async function startH2Responder(options: H2ResponderOptions): Promise<{ server: Server; port: number }> {
  const settings: Required<H2ResponderOptions> = {
    onCall: () => {},
    windowBytes: 16 * 1024 * 1024,
    maxRequestBytes: 4 * 1024 * 1024,
    ...options,
  };
  if (!Number.isInteger(settings.windowBytes) || settings.windowBytes < DEFAULT_WINDOW || settings.windowBytes > MAX_WINDOW) {
    throw new RangeError(`windowBytes must be an integer from ${DEFAULT_WINDOW} to ${MAX_WINDOW}, got ${settings.windowBytes}`);
  }
  if (!Number.isInteger(settings.maxRequestBytes) || settings.maxRequestBytes < 5 || settings.maxRequestBytes >= settings.windowBytes) {
    throw new RangeError(`maxRequestBytes must be an integer from 5 to below windowBytes (${settings.windowBytes}), got ${settings.maxRequestBytes}`);
  }
  const server = createServer((socket) => new Connection(socket, settings));
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
  return { server, port };
}
