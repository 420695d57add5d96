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
