/**
 * Reading a fetched answer's body as text within a byte limit: the one
 * reader for documents the router fetches from elsewhere (a graph, an
 * introspection answer, a JWKS, a persisted-operation file). A declared
 * `Content-Length` over the limit is refused before anything is read; else
 * the body is read while it streams in and dropped (connection closed) once
 * it passes the limit, counting decoded bytes, so a small gzip body that
 * inflates to gigabytes stops at the limit too.
 */

/** A body larger than the reader's limit; the message is the reason to show. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(
    readonly maxBytes: number,
    /** The declared `Content-Length`, when that is what was over the limit. */
    readonly declaredBytes?: number,
  ) {
    const limit = `over the ${formatBytes(maxBytes)} limit`;
    super(declaredBytes === undefined ? `the body is ${limit}` : `the body is ${declaredBytes} bytes, ${limit}`);
  }
}

/** `256 MiB` for 268435456; `1000 bytes` otherwise. */
export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

/** The body as UTF-8 text; throws `ResponseTooLargeError` past `maxBytes`, having stopped the download there. */
export async function readResponseText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new ResponseTooLargeError(maxBytes, declared);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
