/** Reading a request body with a size limit. */
import type { Readable } from 'node:stream';

/**
 * The body's bytes; `undefined` when it is larger than `limit` (the rest is
 * read and dropped, so the client gets its error instead of a reset).
 */
export function readBody(request: Readable & { headers: Record<string, string | string[] | undefined> }, limit: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        resolve(undefined);
      } else {
        chunks.push(chunk);
      }
    });
    request.once('end', () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}
