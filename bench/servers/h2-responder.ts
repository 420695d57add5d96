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
 * What it does: the connection preface, SETTINGS (and their ACK), PING
 * replies, WINDOW_UPDATE both ways (the peer's windows bound what it sends;
 * answers wait for window), DATA split at the peer's largest frame size,
 * RST_STREAM and GOAWAY. What it leaves out: header blocks are not decoded
 * (HPACK), so it answers every call on the connection with `answer`
 * whatever the method; no TLS, no server push, no compression. Answers are
 * HPACK literals without indexing, so the peer's decoder needs no state
 * from this side.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** What a call is answered with: a message, or a status other than OK. */
export type UnaryAnswer = { readonly message: Uint8Array } | { readonly status: number; readonly details: string };

/** What the server does with calls. */
export interface H2ResponderOptions {
  /** The answer to one request message (the bytes inside the gRPC frame). */
  answer(request: Buffer): UnaryAnswer;
  /** Called once per call received. */
  onCall?: () => void;
  /** Receive window of the connection and of each stream; default 16 MiB. */
  windowBytes?: number;
  /** Largest request message accepted; default 4 MiB (RESOURCE_EXHAUSTED beyond). */
  maxRequestBytes?: number;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

const enum FrameType {
  Data = 0,
  Headers = 1,
  RstStream = 3,
  Settings = 4,
  Ping = 6,
  Goaway = 7,
  WindowUpdate = 8,
  Continuation = 9,
}

const FLAG_END_STREAM = 0x1;
const FLAG_ACK = 0x1;
const FLAG_END_HEADERS = 0x4;
const FLAG_PADDED = 0x8;

const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_FRAME_SIZE = 0x5;
const DEFAULT_WINDOW = 65_535;
const DEFAULT_MAX_FRAME = 16_384;
/** Largest frame this side accepts (its SETTINGS_MAX_FRAME_SIZE, left at the default). */
const MAX_INBOUND_FRAME = DEFAULT_MAX_FRAME;

const STATUS_INVALID_ARGUMENT = 3;
const STATUS_RESOURCE_EXHAUSTED = 8;

function frameHeader(length: number, type: FrameType, flags: number, streamId: number): Buffer {
  const header = Buffer.allocUnsafe(9);
  header.writeUIntBE(length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return header;
}

function frame(type: FrameType, flags: number, streamId: number, payload: Buffer): Buffer {
  return Buffer.concat([frameHeader(payload.length, type, flags, streamId), payload]);
}

/** An HPACK string literal, not Huffman-coded (RFC 7541, 5.2). */
function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([hpackInteger(bytes.length, 7, 0), bytes]);
}

/** An HPACK integer with an N-bit prefix (RFC 7541, 5.1). */
function hpackInteger(value: number, prefixBits: number, firstByteFlags: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([firstByteFlags | value]);
  const bytes = [firstByteFlags | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A header field as a literal without indexing, with a new name (RFC 7541, 6.2.2). */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]);
}

// `:status: 200` is entry 8 of the static table; `content-type` is entry 31 (its name, literal value, 4-bit prefix).
const RESPONSE_HEADERS = Buffer.concat([Buffer.from([0x88]), hpackInteger(31, 4, 0x00), hpackString('application/grpc')]);
const OK_TRAILERS = literal('grpc-status', '0');

function statusTrailers(status: number, details: string): Buffer {
  return Buffer.concat([RESPONSE_HEADERS, literal('grpc-status', String(status)), literal('grpc-message', encodeURIComponent(details))]);
}

/** gRPC message frames by message: the service answers from a cache, so each is framed once. */
const framedMessages = new WeakMap<Uint8Array, Buffer>();

/** A message in gRPC's length-prefixed framing (not compressed). */
function grpcMessage(message: Uint8Array): Buffer {
  let data = framedMessages.get(message);
  if (!data) {
    data = Buffer.allocUnsafe(5 + message.length);
    data[0] = 0;
    data.writeUInt32BE(message.length, 1);
    data.set(message, 5);
    framedMessages.set(message, data);
  }
  return data;
}

/** HEADERS, one DATA frame and the trailers of a stream, in one buffer. */
function wholeAnswer(data: Buffer, streamId: number): Buffer {
  const answer = Buffer.allocUnsafe(27 + RESPONSE_HEADERS.length + data.length + OK_TRAILERS.length);
  let at = 0;
  for (const [type, flags, payload] of [
    [FrameType.Headers, FLAG_END_HEADERS, RESPONSE_HEADERS],
    [FrameType.Data, 0, data],
    [FrameType.Headers, FLAG_END_HEADERS | FLAG_END_STREAM, OK_TRAILERS],
  ] as const) {
    answer.writeUIntBE(payload.length, at, 3);
    answer[at + 3] = type;
    answer[at + 4] = flags;
    answer.writeUInt32BE(streamId, at + 5);
    payload.copy(answer, at + 9);
    at += 9 + payload.length;
  }
  return answer;
}

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
  private readonly streams = new Map<number, Stream>();
  /** Streams with an answer waiting for window, in arrival order. */
  private readonly waiting = new Set<number>();
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  private connectionSendWindow = DEFAULT_WINDOW;
  /** DATA bytes taken in since the last connection WINDOW_UPDATE. */
  private unacknowledged = 0;
  /** Stream whose header block is still open (CONTINUATION follows). */
  private headersOpen: { id: number; endStream: boolean } | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly options: Required<H2ResponderOptions>,
  ) {
    socket.setNoDelay(true);
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 0);
    settings.writeUInt32BE(options.windowBytes, 2);
    const increment = Buffer.alloc(4);
    increment.writeUInt32BE(options.windowBytes - DEFAULT_WINDOW, 0);
    socket.write(Buffer.concat([frame(FrameType.Settings, 0, 0, settings), frame(FrameType.WindowUpdate, 0, 0, increment)]));
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => socket.destroy());
  }

  private read(chunk: Buffer): void {
    let input = this.buffered.length > 0 ? Buffer.concat([this.buffered, chunk]) : chunk;
    if (!this.prefaceSeen) {
      if (input.length < PREFACE.length) {
        this.buffered = input;
        return;
      }
      if (!input.subarray(0, PREFACE.length).equals(PREFACE)) return this.fail('no HTTP/2 connection preface');
      this.prefaceSeen = true;
      input = input.subarray(PREFACE.length);
    }
    let offset = 0;
    while (input.length - offset >= 9) {
      const length = input.readUIntBE(offset, 3);
      if (length > MAX_INBOUND_FRAME) return this.fail(`a frame of ${length} bytes exceeds SETTINGS_MAX_FRAME_SIZE`);
      if (input.length - offset < 9 + length) break;
      const type = input[offset + 3]!;
      const flags = input[offset + 4]!;
      const streamId = input.readUInt32BE(offset + 5) & 0x7fffffff;
      const payload = input.subarray(offset + 9, offset + 9 + length);
      offset += 9 + length;
      if (this.headersOpen && type !== FrameType.Continuation) return this.fail('a header block was interrupted');
      this.onFrame(type, flags, streamId, payload);
      if (this.socket.destroyed) return;
    }
    // Keep a copy of the tail only: the chunk may be a view of a larger buffer.
    this.buffered = offset < input.length ? Buffer.from(input.subarray(offset)) : Buffer.alloc(0);
  }

  private onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    switch (type) {
      case FrameType.Settings:
        if (!(flags & FLAG_ACK)) this.onSettings(payload);
        return;
      case FrameType.Ping:
        if (!(flags & FLAG_ACK)) this.socket.write(frame(FrameType.Ping, FLAG_ACK, 0, payload));
        return;
      case FrameType.WindowUpdate:
        return this.onWindowUpdate(streamId, payload);
      case FrameType.Headers:
        // A second header block on a stream would be the client's trailers: the request ends there.
        if (!this.streams.has(streamId)) this.streams.set(streamId, { chunks: [], received: 0, sendWindow: this.peerInitialWindow });
        if (flags & FLAG_END_HEADERS) {
          if (flags & FLAG_END_STREAM) this.onRequestEnd(streamId);
        } else {
          this.headersOpen = { id: streamId, endStream: (flags & FLAG_END_STREAM) !== 0 };
        }
        return;
      case FrameType.Continuation:
        if (!this.headersOpen || this.headersOpen.id !== streamId) return this.fail('CONTINUATION without an open header block');
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
        return;
      case FrameType.Goaway:
        this.socket.end();
        return;
      default:
        // PRIORITY and unknown frame types are ignored (RFC 9113, 4.1 and 5.5).
        return;
    }
  }

  private onSettings(payload: Buffer): void {
    if (payload.length % 6 !== 0) return this.fail('SETTINGS payload is not a multiple of 6 bytes');
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        // A new initial window changes every open stream's window by the difference (RFC 9113, 6.9.2).
        for (const stream of this.streams.values()) stream.sendWindow += value - this.peerInitialWindow;
        this.peerInitialWindow = value;
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        this.peerMaxFrame = value;
      }
    }
    this.socket.write(frame(FrameType.Settings, FLAG_ACK, 0, Buffer.alloc(0)));
    this.sendWaiting();
  }

  private onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) return this.fail('WINDOW_UPDATE payload is not 4 bytes');
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) this.connectionSendWindow += increment;
    else {
      const stream = this.streams.get(streamId);
      if (stream) stream.sendWindow += increment;
    }
    this.sendWaiting();
  }

  private onData(flags: number, streamId: number, payload: Buffer): void {
    this.unacknowledged += payload.length;
    if (this.unacknowledged >= this.options.windowBytes / 2) {
      const increment = Buffer.alloc(4);
      increment.writeUInt32BE(this.unacknowledged, 0);
      this.socket.write(frame(FrameType.WindowUpdate, 0, 0, increment));
      this.unacknowledged = 0;
    }
    const stream = this.streams.get(streamId);
    if (!stream) return;
    let body = payload;
    if (flags & FLAG_PADDED) {
      const padding = payload[0] ?? 0;
      if (padding >= payload.length) return this.fail('DATA padding longer than the frame');
      body = payload.subarray(1, payload.length - padding);
    }
    stream.received += body.length;
    if (stream.received <= this.options.maxRequestBytes) stream.chunks.push(Buffer.from(body));
    if (flags & FLAG_END_STREAM) this.onRequestEnd(streamId);
  }

  /** The request is complete: answer it now, or as far as the peer's windows allow. */
  private onRequestEnd(streamId: number): void {
    const stream = this.streams.get(streamId);
    if (!stream) return;
    this.options.onCall();
    const answer = this.answerFor(stream);
    if ('status' in answer) {
      this.streams.delete(streamId);
      this.socket.write(frame(FrameType.Headers, FLAG_END_HEADERS | FLAG_END_STREAM, streamId, statusTrailers(answer.status, answer.details)));
      return;
    }
    const data = grpcMessage(answer.message);
    // The usual case: the whole answer fits the windows and one frame, and leaves in one write.
    if (data.length <= this.peerMaxFrame && data.length <= stream.sendWindow && data.length <= this.connectionSendWindow) {
      this.streams.delete(streamId);
      this.connectionSendWindow -= data.length;
      this.socket.write(wholeAnswer(data, streamId));
      return;
    }
    stream.pending = { data, trailers: OK_TRAILERS };
    this.socket.cork();
    this.socket.write(frame(FrameType.Headers, FLAG_END_HEADERS, streamId, RESPONSE_HEADERS));
    this.sendPending(streamId, stream);
    this.socket.uncork();
  }

  private answerFor(stream: Stream): UnaryAnswer {
    if (stream.received > this.options.maxRequestBytes) {
      return { status: STATUS_RESOURCE_EXHAUSTED, details: `request message larger than ${this.options.maxRequestBytes} bytes` };
    }
    const body = stream.chunks.length === 1 ? stream.chunks[0]! : Buffer.concat(stream.chunks);
    if (body.length < 5 || body[0] !== 0 || body.length !== 5 + body.readUInt32BE(1)) {
      return { status: STATUS_INVALID_ARGUMENT, details: `expected one uncompressed gRPC message frame, got ${body.length} bytes` };
    }
    try {
      return this.options.answer(body.subarray(5));
    } catch (error) {
      return { status: STATUS_INVALID_ARGUMENT, details: (error as Error).message };
    }
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
    this.socket.write(frame(FrameType.Headers, FLAG_END_HEADERS | FLAG_END_STREAM, streamId, pending.trailers));
    this.streams.delete(streamId);
    this.waiting.delete(streamId);
  }

  private sendWaiting(): void {
    for (const streamId of [...this.waiting]) {
      const stream = this.streams.get(streamId);
      if (stream) this.sendPending(streamId, stream);
      else this.waiting.delete(streamId);
      if (this.connectionSendWindow <= 0) return;
    }
  }

  /** A connection error: GOAWAY with PROTOCOL_ERROR, then close (RFC 9113, 5.4.1). */
  private fail(reason: string): void {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(1, 4);
    this.socket.end(Buffer.concat([frame(FrameType.Goaway, 0, 0, Buffer.concat([payload, Buffer.from(reason, 'utf8')]))]));
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
  const server = createServer((socket) => new Connection(socket, settings));
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
  return { server, port };
}
