/** gRPC's message framing over HTTP/2, for the bench's gRPC servers and floors. */
import { frameMessage } from '../../plugins/grpc/direct-calls.js';

/** gRPC's length prefix: not compressed, then the message length (big-endian); the router's own framing. */
export const grpcFrame = frameMessage;

/** Frames by message: the bench services answer from a cache, so each message is framed once. */
const frames = new WeakMap<Uint8Array, Buffer>();

/** `grpcFrame` of a cached message, made once. */
export function cachedFrame(message: Uint8Array): Buffer {
  let frame = frames.get(message);
  if (!frame) frames.set(message, (frame = grpcFrame(message)));
  return frame;
}

/** The one message of a unary body: exactly one uncompressed frame; throws otherwise. */
export function unframe(body: Buffer, what: string): Buffer {
  if (body.length < 5 || body[0] !== 0 || body.length !== 5 + body.readUInt32BE(1)) {
    throw new Error(`${what}: expected one uncompressed gRPC message frame, got ${body.length} bytes`);
  }
  return body.subarray(5);
}
