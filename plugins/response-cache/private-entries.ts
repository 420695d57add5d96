import { createHash } from 'node:crypto';
import type { RequestState } from '../../src/index.js';
import { AUTHENTICATION } from '../authentication/index.js';
import type { ResponseCacheRecord } from './request-record.js';

/** Where the user of a request is read from (`response_cache.private_entries`). */
export type UserSource = { readonly header: string } | { readonly claim: string };

/** Longest user value taken (longer: the request has no user for the cache, its private answers stay uncached). */
const MAX_USER_VALUE = 1024;

/**
 * Per-user entries. A `private` answer is stored under its shared key plus
 * a hash of the user's value, so another user (whose hash differs) can
 * never read it; the shared key itself is never written with a private
 * answer. The value is hashed so that keys do not carry user ids (emails,
 * subjects) into Redis, and so that any value makes a well-formed key.
 */
export class PrivateEntries {
  constructor(readonly source: UserSource) {}

  /** Notes the user's header value in the request stage (the claim is read later, from request state). */
  noteRequest(headers: Readonly<Record<string, string>>, record: ResponseCacheRecord): void {
    if ('header' in this.source) record.user = userHash(headers[this.source.header]);
  }

  /** The request's user hash, undefined when the request names none (then private answers are not stored). */
  userOf(state: RequestState, record: ResponseCacheRecord): string | undefined {
    if ('header' in this.source) return record.user;
    // Read per fetch: authentication sets it in the request stage, whatever the plugin order.
    if (record.user === undefined) record.user = userHash(state.get(AUTHENTICATION)?.claims[this.source.claim]);
    return record.user;
  }
}

/** The key of a user's private copy of the entry at `key`. */
export function privateKey(key: string, user: string): string {
  return `${key}|user:${user}`;
}

/** A digest of the user's value (string or number); undefined for none, an empty or an oversized one. */
function userHash(value: unknown): string | undefined {
  const text = typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  if (text === undefined || text === '' || text.length > MAX_USER_VALUE) return undefined;
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}
