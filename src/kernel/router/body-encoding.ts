/**
 * Whether a POST body to `/graphql` arrives in a form the router reads, and
 * its decoding: plain or compressed with one of the codings clients send
 * (`gzip`, `deflate`, `br`: Cosmo decodes gzip, Apollo Router and Hive
 * Gateway these and more), and UTF-8 (the only charset GraphQL over HTTP
 * requires; others get 415, as it says). A coding the router does not
 * decode, or a body compressed twice, is a 415 naming the coding.
 *
 * `limits.max_request_body` bounds both the bytes received and the bytes
 * decoded: zlib stops at the limit, so a small body that inflates to
 * gigabytes costs no more than a plain body at the limit. Decoding also
 * stops past `MAX_RATIO` times the bytes received (beyond a first
 * `RATIO_FREE_BYTES`): without that, a client could make the router read
 * and parse a megabyte for every hundred bytes it sends. The post lane
 * (graphql-post-lane.ts) takes only plain bodies; the general handler
 * (graphql-http.ts) and the streaming endpoint ask here.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import { tooLargeMessage } from './request-body.js';

/** A body may decode to at most this many times its size... */
const MAX_RATIO = 100;
/** ...once it decodes past this many bytes (small compressed requests compress well). */
const RATIO_FREE_BYTES = 64 * 1024;

/** A `Content-Encoding` the router decodes. */
export type BodyCoding = 'gzip' | 'deflate' | 'br';

type Decoder = (body: Buffer, options: ZlibOptions & BrotliOptions) => Promise<Buffer>;

/** zlib on the thread pool: a request that inflates to the limit does not hold the event loop. */
const DECODERS: Readonly<Record<BodyCoding, Decoder>> = {
  gzip: promisify(gunzip) as Decoder,
  deflate: promisify(inflate) as Decoder,
  br: promisify(brotliDecompress) as Decoder,
};

/** What a `Content-Encoding` header asks of the reader. */
export type BodyEncoding = { readonly coding: BodyCoding | undefined } | { readonly refused: string };

/**
 * How the body of a request with this `Content-Type` (its first entry, as
 * the handler reads it) and `Content-Encoding` is read: plain (`coding`
 * undefined), decoded with one coding, or refused with the 415 message.
 * `decode` false (`traffic_shaping.router.decompression_enabled`) refuses
 * every coding.
 */
export function bodyEncoding(contentType: string, contentEncoding: string | undefined, decode: boolean): BodyEncoding {
  const codings = contentEncoding === undefined ? [] : codingsOf(contentEncoding);
  if (!decode && codings.length > 0) {
    return {
      refused: `Content-Encoding${quoted(codings[0]!)} is not supported: this router does not decode request bodies (traffic_shaping.router.decompression_enabled). Send the body uncompressed.`,
    };
  }
  if (codings.length > 1) {
    return { refused: `Content-Encoding lists ${codings.length} codings: the router decodes one (gzip, deflate or br). Compress the body once.` };
  }
  const coding = codings[0];
  if (coding !== undefined && !isDecoded(coding)) {
    return {
      refused: `Content-Encoding${quoted(coding)} is not supported: the router decodes gzip, deflate and br. Send the body with one of those, or uncompressed (no Content-Encoding, or identity).`,
    };
  }
  const charset = charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return { refused: `The Content-Type charset${quoted(charset)} is not supported: send the body as UTF-8 (charset=utf-8, or no charset).` };
  }
  return { coding };
}

/** A body that does not decompress with the coding it was sent with (400). */
export class BodyDecodingError extends Error {
  override readonly name = 'BodyDecodingError';
  constructor(coding: BodyCoding, reason: string) {
    // zlib's reasons are fixed phrases ("incorrect header check"), never the body's bytes.
    super(`The request body does not decompress as ${coding} (${reason}).`);
  }
}

/** A body that decodes past the limit, or past `MAX_RATIO` times its size (413); decoding stopped there. */
export class DecodedBodyTooLargeError extends Error {
  override readonly name = 'DecodedBodyTooLargeError';
}

/**
 * The body decoded. Throws `DecodedBodyTooLargeError` when the decoded
 * bytes would pass `limit` or the ratio, `BodyDecodingError` for data that
 * is not `coding`.
 */
export async function decodeBody(body: Buffer, coding: BodyCoding, limit: number): Promise<Buffer> {
  const byRatio = Math.max(RATIO_FREE_BYTES, body.length * MAX_RATIO);
  try {
    return await DECODERS[coding](body, { maxOutputLength: Math.max(1, Math.min(limit, byRatio)) });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new DecodedBodyTooLargeError(
        byRatio < limit
          ? `The request body decompresses past ${byRatio} bytes from ${body.length} (more than ${MAX_RATIO} times its size); send it less compressed, or uncompressed.`
          : tooLargeMessage(limit),
      );
    }
    throw new BodyDecodingError(coding, error instanceof Error ? error.message : 'unreadable data');
  }
}

/** The codings of a `Content-Encoding` list, lower case, `identity` left out; `x-gzip` is gzip (RFC 9110, 8.4.1.3). */
function codingsOf(header: string): string[] {
  const codings: string[] = [];
  for (const entry of header.split(',')) {
    const coding = entry.trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') codings.push(coding === 'x-gzip' ? 'gzip' : coding);
  }
  return codings;
}

function isDecoded(coding: string): coding is BodyCoding {
  return Object.hasOwn(DECODERS, coding);
}

/** The `charset` parameter of a media type, lower case and unquoted; undefined when it has none. */
function charsetOf(contentType: string): string | undefined {
  const params = contentType.split(';');
  for (let i = 1; i < params.length; i++) {
    const at = params[i]!.indexOf('=');
    if (at < 0 || params[i]!.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    return params[i]!.slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return undefined;
}

/** An HTTP token, as a message names it (` "gzip"`); nothing for anything else, so no error repeats arbitrary client text. */
function quoted(value: string): string {
  return /^[!#$%&'*+.^_`|~0-9a-z-]{1,40}$/.test(value) ? ` "${value}"` : '';
}
