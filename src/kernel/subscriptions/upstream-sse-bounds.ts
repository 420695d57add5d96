/**
 * Bounds on what the router holds while reading a subgraph's SSE response:
 * the unfinished event (a subgraph may stream one line forever) and an error
 * answer's body (which may be endless too).
 */

/** How much of a non-stream answer (an HTTP error) is read: enough for a GraphQL error; the rest is not read. */
export const ERROR_BODY_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const isLineEnd = (byte: number | undefined): boolean => byte === LF || byte === CR;

/**
 * Counts the bytes of the event being received: everything since the last
 * blank line (the end of an event, or of a run of comments), which is what
 * the SSE parser buffers until the event is dispatched.
 */
export class PendingEventBytes {
  private pending = 0;
  /** The last byte of the previous chunk: a blank line may straddle two chunks. */
  private lastByte: number | undefined;

  /** Takes the next chunk of the stream; returns the bytes of the unfinished event after it. */
  add(chunk: Uint8Array): number {
    const end = afterLastBlankLine(chunk, this.lastByte);
    this.pending = end < 0 ? this.pending + chunk.byteLength : chunk.byteLength - end;
    if (chunk.byteLength > 0) this.lastByte = chunk[chunk.byteLength - 1];
    return this.pending;
  }
}

/** The index just past the last blank line in `chunk` (two line ends in a row, `\r\n` being one), or -1. */
function afterLastBlankLine(chunk: Uint8Array, previous: number | undefined): number {
  for (let i = chunk.byteLength - 1; i >= 0; i--) {
    const byte = chunk[i];
    if (!isLineEnd(byte)) continue;
    const before = i > 0 ? chunk[i - 1] : previous;
    if (isLineEnd(before) && !(before === CR && byte === LF)) return i + 1;
  }
  return -1;
}

/** The first `maxBytes` of a body as text; the rest is cancelled, never buffered. */
export async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.byteLength > maxBytes - size ? value.subarray(0, maxBytes - size) : value;
      chunks.push(part);
      size += part.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}
