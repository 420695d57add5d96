/**
 * The request message of a Connect GET, read from the query as the Connect
 * protocol writes it: the message in its encoding (`json` or `proto`),
 * compressed when `compression` names gzip or br, base64-encoded when
 * `base64=1` (base64url or standard alphabet, padding optional), then
 * percent-encoded. Every GET is decided here, for JSON and binary messages
 * alike, so what a client gets wrong is its `invalid_argument` (or
 * `unimplemented` for a compression not offered), never connect-node's
 * `internal`.
 */
import { Code } from '@connectrpc/connect';
import { ConnectFailure, invalidArgument } from './connect-errors.js';

/** Compressions answered here (the same ones as for a POST body). */
export type MessageCompression = 'identity' | 'gzip' | 'br';

/** A GET's message, still compressed (decompressing is asynchronous and bounded, see json-calls.ts). */
export interface GetMessage {
  /** The message's encoding: protobuf's binary form when true, JSON otherwise. */
  readonly binary: boolean;
  readonly compression: MessageCompression;
  readonly bytes: Buffer;
}

/** The compressions a GET may name, as connect-node lists them. */
const SUPPORTED_COMPRESSION = 'gzip,br';

/** Reads the message of a GET whose `connect`, `encoding` and `message` parameters were checked. */
export function getMessage(params: URLSearchParams, rawQuery: string): GetMessage {
  const binary = params.get('encoding') === 'proto';
  const requested = params.get('compression') ?? '';
  if (requested !== '' && requested !== 'identity' && requested !== 'gzip' && requested !== 'br') {
    throw new ConnectFailure(Code.Unimplemented, `unknown compression "${requested}": supported encodings are ${SUPPORTED_COMPRESSION.replace(',', ', ')}`, {
      headers: { 'accept-encoding': SUPPORTED_COMPRESSION },
    });
  }
  const compression: MessageCompression = requested === '' ? 'identity' : requested;
  const bytes = params.get('base64') === '1' ? base64Bytes(params.get('message')!) : queryValueBytes(rawQuery, 'message');
  return { binary, compression, bytes };
}

const BASE64_CHARACTERS = /^[A-Za-z0-9+/_-]*$/;

/**
 * Base64 in either alphabet (`-_` or `+/`), with or without its padding; anything else (a character
 * outside the alphabet, a length no encoding gives, padding where it does not belong) is refused.
 */
export function base64Bytes(text: string): Buffer {
  const unpadded = text.replace(/={1,2}$/, '');
  const padded = unpadded.length !== text.length;
  if (!BASE64_CHARACTERS.test(unpadded) || unpadded.length % 4 === 1 || (padded && text.length % 4 !== 0)) {
    throw invalidArgument('query parameter message is not base64: base64=1 needs base64url or standard base64, with or without padding');
  }
  // Node's base64 decoder reads both alphabets.
  return Buffer.from(unpadded, 'base64');
}

/**
 * The bytes of the first `name` parameter of a query, percent-decoded as bytes (`+` is a space, as
 * URLSearchParams reads it): a binary message sent without base64 keeps bytes that are not UTF-8.
 */
export function queryValueBytes(rawQuery: string, name: string): Buffer {
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (percentDecode(key).toString('utf8') === name) return percentDecode(eq < 0 ? '' : pair.slice(eq + 1));
  }
  return Buffer.alloc(0);
}

const HEX = /^[0-9A-Fa-f]{2}$/;

function percentDecode(text: string): Buffer {
  if (!text.includes('%') && !text.includes('+')) return Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at]!;
    if (char === '%' && HEX.test(text.slice(at + 1, at + 3))) {
      out.push(Number.parseInt(text.slice(at + 1, at + 3), 16));
      at += 2;
    } else if (char === '+') {
      out.push(0x20);
    } else {
      // A lone `%` stays as it is, as URLSearchParams keeps it.
      const code = text.codePointAt(at)!;
      const encoded = Buffer.from(String.fromCodePoint(code), 'utf8');
      for (const byte of encoded) out.push(byte);
      if (code > 0xffff) at += 1;
    }
  }
  return Buffer.from(out);
}
