/**
 * gzip for `/graphql` answers over the router's listener, for clients whose
 * `Accept-Encoding` takes it: browsers and most HTTP clients send it, and
 * federated answers of lists compress several times over. Cosmo compresses
 * with gzip from 4 KiB and Apollo Router whatever the client accepts; here
 * gzip from `traffic_shaping.router.response_compression_min_size` (4 KiB),
 * on the zlib thread pool so a large answer does not hold the event loop.
 *
 * An answer that large says `Vary: Accept-Encoding` whether it went out
 * compressed or not, so a cache in front keeps the two apart; a smaller one
 * is the same for every client and says nothing. Answers in a streaming
 * format (SSE, multipart; also the single-result ones the general handler
 * sends while subscriptions are off) and answers that name their own
 * `Content-Encoding` are never compressed: each event must reach the client
 * when it is sent, and proxies read `content-encoding: none` on SSE as "do
 * not buffer". The bytes of an answer shared by several requests (single
 * flight) are compressed once for all of them.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { perAcceptValue, qualityValue } from './accept-ranges.js';
import { mergeVary } from './vary.js';

const gzipAsync = promisify(gzip);

/** `traffic_shaping.router` as the writers use it; undefined: never compress. */
export interface ResponseCompression {
  /** `response_compression_min_size`, bytes. */
  readonly minBytes: number;
}

/** The compression of `traffic_shaping.router`'s keys. */
export function responseCompressionOf(router: { response_compression_enabled: boolean; response_compression_min_size: number }): ResponseCompression | undefined {
  return router.response_compression_enabled ? { minBytes: router.response_compression_min_size } : undefined;
}

/**
 * Whether an `Accept-Encoding` value takes gzip (RFC 9110 12.5.3): `gzip`
 * (or `x-gzip`) with a quality above 0, or, when neither is listed, `*`
 * with one. Remembered per value, as `Accept` is.
 */
export const acceptsGzip: (acceptEncoding: string) => boolean = perAcceptValue((header) => {
  let gzipQ: number | undefined;
  let anyQ: number | undefined;
  for (const entry of header.split(',')) {
    const [coding = '', ...params] = entry.split(';');
    const name = coding.trim().toLowerCase();
    let q = 1;
    for (const param of params) {
      const at = param.indexOf('=');
      if (at > 0 && param.slice(0, at).trim().toLowerCase() === 'q') q = qualityValue(param.slice(at + 1).trim());
    }
    if (name === 'gzip' || name === 'x-gzip') gzipQ ??= q;
    else if (name === '*') anyQ ??= q;
  }
  return (gzipQ ?? anyQ ?? 0) > 0;
});

/**
 * Sends a complete answer with its length: gzip-compressed when `compression`
 * is on, the body has at least its `minBytes` and the request's
 * `Accept-Encoding` takes gzip. Synchronous unless it compresses.
 */
export function sendAnswer(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: string | Buffer | undefined,
  compression: ResponseCompression | undefined,
): void | Promise<void> {
  const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (body === undefined || compression === undefined || length < compression.minBytes || !compressible(headers)) {
    res.writeHead(status, body === undefined ? headers : { ...headers, 'content-length': length });
    res.end(body);
    return;
  }
  const varied = withVary(headers);
  const acceptEncoding = res.req.headers['accept-encoding'];
  if (acceptEncoding === undefined || !acceptsGzip(acceptEncoding)) {
    res.writeHead(status, { ...varied, 'content-length': length });
    res.end(body);
    return;
  }
  return sendGzipped(res, status, varied, body);
}

/** Compressed bytes of shared answers (`serializeResult` gives requests sharing an answer one Buffer). */
const sharedGzip = new WeakMap<Buffer, Promise<Buffer>>();

async function sendGzipped(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: string | Buffer): Promise<void> {
  let pending = typeof body === 'string' ? undefined : sharedGzip.get(body);
  if (pending === undefined) {
    pending = gzipAsync(body);
    if (typeof body !== 'string') {
      const shared = body;
      sharedGzip.set(shared, pending);
      // A failure is this request's alone: the next one tries again.
      pending.catch(() => sharedGzip.delete(shared));
    }
  }
  const compressed = await pending;
  if (res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-encoding': 'gzip', 'content-length': compressed.length });
  res.end(compressed);
}

/** Whether an answer may be compressed: not in a streaming format, and no `Content-Encoding` of its own. */
function compressible(headers: OutgoingHttpHeaders): boolean {
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (lower === 'content-encoding') return false;
    if (lower === 'content-type' && /^\s*(?:text\/event-stream|multipart\/)/i.test(String(headers[name]))) return false;
  }
  return true;
}

/** The headers with `Accept-Encoding` in their `Vary` (whatever the case of its name there). */
function withVary(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const named = Object.keys(headers).find((name) => name.toLowerCase() === 'vary');
  if (named === undefined) return { ...headers, vary: 'Accept-Encoding' };
  const { [named]: current, ...others } = headers;
  return { ...others, vary: mergeVary(Array.isArray(current) ? current.join(', ') : String(current), 'Accept-Encoding') };
}
