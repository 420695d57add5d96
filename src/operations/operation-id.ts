/** Operation ids: the SHA-256 of an operation's text, as 64 lower-case hex digits. */
import { createHash } from 'node:crypto';

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

/** The SHA-256 of a text's UTF-8 bytes (or of raw bytes), lower-case hex. */
export function sha256Hex(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Whether a value is a SHA-256 id: 64 hexadecimal characters (either case). */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

/**
 * An alias (a Relay id) in the form a request finds it by: a SHA-256 — 64 hex characters, bare or after
 * `sha256:` — in lower case, as requests' hashes and document ids are read; anything else as it is. Kept in
 * this form, an alias that spells another operation's id is recognised as the same key, not stored beside it.
 */
export function canonicalAlias(alias: string): string {
  const hex = alias.startsWith('sha256:') ? alias.slice('sha256:'.length) : alias;
  return isSha256Hex(hex) ? hex.toLowerCase() : alias;
}
