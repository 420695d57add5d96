import { createHash, timingSafeEqual } from 'node:crypto';
import { RouterError, toErrorResponse, type OperationResponse } from '../../src/index.js';

/** Request header carrying `client_control.shared_key`. */
export const CACHE_REFRESH_KEY_HEADER = 'x-switchyard-cache-refresh-key';

/**
 * Who may ask for a fresh answer (`response_cache.client_control`). With a
 * `shared_key`, only a request carrying it in `X-Switchyard-Cache-Refresh-Key`
 * may: other clients' `no-cache` (browsers send it on a hard reload) is
 * ignored, and a wrong key is refused with 400 so its sender learns why.
 * Without one, every client may (development, the playground), and the
 * header is ignored.
 */
export class ClientControl {
  private readonly expected: Buffer | undefined;

  constructor(sharedKey: string) {
    this.expected = sharedKey === '' ? undefined : digest(sharedKey);
  }

  /** A refusal when the request carries a refresh key that is not the configured one. */
  check(headers: Readonly<Record<string, string>>): OperationResponse | undefined {
    const sent = headers[CACHE_REFRESH_KEY_HEADER];
    if (!this.expected || sent === undefined || this.allowsKey(sent)) return undefined;
    return toErrorResponse(new RouterError('BAD_REQUEST', `Invalid ${CACHE_REFRESH_KEY_HEADER} header.`, { status: 400 }));
  }

  /** Whether this request's no-cache is honoured. */
  allows(headers: Readonly<Record<string, string>>): boolean {
    if (!this.expected) return true;
    const sent = headers[CACHE_REFRESH_KEY_HEADER];
    return sent !== undefined && this.allowsKey(sent);
  }

  private allowsKey(sent: string): boolean {
    // Constant time: the key must not be guessable from response times.
    return this.expected !== undefined && timingSafeEqual(digest(sent), this.expected);
  }
}

/** Fixed-length digests let keys of any length be compared in constant time. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
