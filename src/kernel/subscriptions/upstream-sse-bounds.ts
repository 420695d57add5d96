/**
 * Bounds on what the router holds while reading a subgraph's SSE response:
 * the unfinished event (a subgraph may stream one line forever) and an error
 * answer's body (which may be endless too).
 */

/** How much of a non-stream answer (an HTTP error) is read: enough for a GraphQL error; the rest is not read. */
export const ERROR_BODY_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;

/**
 * Measures the event being received, as the SSE parser buffers it: its
 * field lines (`data:`, `event:`, ... with their line ends) since the last
 * blank line, plus the line not finished yet. A comment line (`:` first) is
 * not part of an event (the SSE spec ignores it), so finished comments do
 * not count: a subgraph may send keep-alive comments without blank lines
 * between events. An unfinished line counts whatever it is, so one endless
 * line (comment or not) is bounded too.
 */
export class PendingEventBytes {
  /** Bytes of the event's finished field lines, line ends included. */
  private eventBytes = 0;
  /** Bytes of the line being received. */
  private lineBytes = 0;
  /** Whether the line being received is a comment (known from its first byte). */
  private lineIsComment = false;
  /** The previous chunk ended with CR: an LF starting this one completes that CRLF. */
  private afterCR = false;

  /**
   * Takes the next chunk of the stream; returns the largest the event being
   * received grew to within it, so an event that starts and ends inside one
   * chunk is measured too.
   */
  add(chunk: Uint8Array): number {
    const length = chunk.byteLength;
    let largest = this.eventBytes + this.lineBytes;
    let at = this.afterCR && chunk[0] === LF ? 1 : 0;
    if (length > 0) this.afterCR = false;
    // Next CR and LF at or after `at`; -1 once there is none (each searched natively, at most once per line).
    let nextLF = chunk.indexOf(LF, at);
    let nextCR = chunk.indexOf(CR, at);
    while (at < length) {
      if (nextLF !== -1 && nextLF < at) nextLF = chunk.indexOf(LF, at);
      if (nextCR !== -1 && nextCR < at) nextCR = chunk.indexOf(CR, at);
      const end = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      const lineEnd = end === -1 ? length : end;
      if (this.lineBytes === 0 && lineEnd > at) this.lineIsComment = chunk[at] === COLON;
      this.lineBytes += lineEnd - at;
      if (end === -1) break;
      largest = Math.max(largest, this.endLine());
      at = end + 1;
      if (chunk[end] === CR) {
        if (at === length) this.afterCR = true;
        else if (chunk[at] === LF) at++;
      }
    }
    return Math.max(largest, this.eventBytes + this.lineBytes);
  }

  /**
   * A blank line ends the event; a field line joins it; a comment line is
   * dropped. Returns the event's size at the line end: the line, line end
   * included, was buffered with it.
   */
  private endLine(): number {
    const { eventBytes, lineBytes } = this;
    this.lineBytes = 0;
    if (lineBytes === 0) {
      this.eventBytes = 0;
      return eventBytes;
    }
    if (!this.lineIsComment) this.eventBytes += lineBytes + 1;
    return eventBytes + lineBytes + 1;
  }
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
