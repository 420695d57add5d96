/**
 * HTTP/2 frames and HPACK literals for the bench's gRPC responder
 * (h2-responder.ts): just what a server needs to answer unary gRPC calls.
 * Header blocks are HPACK literals without indexing (RFC 7541, 6.2.2), so
 * the peer's decoder needs no state from this side.
 */

export const enum FrameType {
  Data = 0,
  Headers = 1,
  RstStream = 3,
  Settings = 4,
  Ping = 6,
  Goaway = 7,
  WindowUpdate = 8,
  Continuation = 9,
}

export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const FLAG_PADDED = 0x8;

export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_FRAME_SIZE = 0x5;
export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_MAX_FRAME = 16_384;
export const MAX_FRAME_LIMIT = 16_777_215;
export const MAX_WINDOW = 2_147_483_647;

/** HTTP/2 error codes (RFC 9113, 7). */
export const enum ErrorCode {
  NoError = 0,
  Protocol = 1,
  FlowControl = 3,
  FrameSize = 6,
}

/** gRPC status codes the responder answers with itself. */
export const STATUS_INVALID_ARGUMENT = 3;
export const STATUS_RESOURCE_EXHAUSTED = 8;

export function frameHeader(length: number, type: FrameType, flags: number, streamId: number): Buffer {
  const header = Buffer.allocUnsafe(9);
  header.writeUIntBE(length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return header;
}

export function frame(type: FrameType, flags: number, streamId: number, payload: Buffer): Buffer {
  return Buffer.concat([frameHeader(payload.length, type, flags, streamId), payload]);
}

/** A frame carrying one 32-bit value (WINDOW_UPDATE's increment, RST_STREAM's error code). */
export function uint32Frame(type: FrameType, streamId: number, value: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(value, 0);
  return frame(type, 0, streamId, payload);
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

/** An HPACK string literal, not Huffman-coded (RFC 7541, 5.2). */
function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([hpackInteger(bytes.length, 7, 0), bytes]);
}

/** A header field as a literal without indexing, with a new name. */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]);
}

/**
 * A dynamic table size update to 0 (RFC 7541, 6.3), at the start of a
 * connection's first header block: this side never indexes, and saying so
 * satisfies a peer that asked for a smaller table than the default.
 */
export const TABLE_SIZE_ZERO = Buffer.from([0x20]);

// `:status: 200` is entry 8 of the static table; `content-type` is entry 31 (its name, literal value, 4-bit prefix).
export const RESPONSE_HEADERS = Buffer.concat([Buffer.from([0x88]), hpackInteger(31, 4, 0x00), hpackString('application/grpc')]);
export const OK_TRAILERS = literal('grpc-status', '0');

/** A failed call's one header block ("trailers-only"): status 200, the gRPC status and its message. */
export function statusOnly(status: number, details: string): Buffer {
  return Buffer.concat([RESPONSE_HEADERS, literal('grpc-status', String(status)), literal('grpc-message', percentEncode(details))]);
}

/** gRPC's percent-encoding of `grpc-message`: UTF-8, every byte outside 0x20-0x7E and `%` escaped. */
export function percentEncode(text: string): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    encoded += byte < 0x20 || byte > 0x7e || byte === 0x25 ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(byte);
  }
  return encoded;
}

/** HEADERS, one DATA frame and the trailers of a stream, in one buffer. */
export function wholeAnswer(data: Buffer, streamId: number): Buffer {
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
