/**
 * Reads a response body as text, refusing it once it passes a byte limit.
 * The limit counts decoded bytes (after `Content-Encoding`), so a small
 * gzip body that inflates to hundreds of megabytes is stopped at the
 * limit; a declared `Content-Length` over the limit is refused before
 * anything is read.
 */

/** A body over the limit; the message is the reason logged. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
  constructor(maxBytes: number) {
    super(`the document is larger than ${maxBytes} bytes`);
  }
}

/** The body as UTF-8 text; throws `BodyTooLargeError` past `maxBytes` (and stops the download there). */
export async function readCappedText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new BodyTooLargeError(maxBytes);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Cancelling closes the connection: the rest is never downloaded nor inflated.
      await reader.cancel();
      throw new BodyTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}
