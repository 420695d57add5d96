/** gRPC's message framing over HTTP/2, for the bench's bare node:http2 programs. */

/** gRPC's length prefix: not compressed, then the message length (big-endian). */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

/** The one message of a unary body: exactly one uncompressed frame; throws otherwise. */
export function unframe(body: Buffer, what: string): Buffer {
  if (body.length < 5 || body[0] !== 0 || body.length !== 5 + body.readUInt32BE(1)) {
    throw new Error(`${what}: expected one uncompressed gRPC frame, got ${body.length} bytes`);
  }
  return body.subarray(5);
}
