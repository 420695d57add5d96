/** The identity the `authentication` plugin leaves in request state for other plugins. */
import { StateKey } from '../../src/index.js';

/** What a valid token says about the caller. Frozen; never change it. */
export interface AuthenticatedIdentity {
  /** The token's payload (registered and custom claims), as verified. */
  readonly claims: Readonly<Record<string, unknown>>;
  /** Scopes from the `scope` claim (a space-separated string or an array of strings). */
  readonly scopes: ReadonlySet<string>;
  /** URL of the JWKS whose key verified the token, without any `user:password@`. */
  readonly provider: string;
  /** Seconds since the epoch when the token expires, if it says. */
  readonly expiresAt: number | undefined;
}

/**
 * Set by `authentication` in the request stage when the request carried a
 * valid token; absent when it carried none (a request with an invalid token
 * never gets past the request stage). Read it in any later hook:
 * `event.state.get(AUTHENTICATION)?.claims.sub`.
 */
export const AUTHENTICATION = new StateKey<AuthenticatedIdentity>('authentication');

/**
 * Set (to true) by `authentication` on a request that carried no token, when
 * `ignore_introspection` is on: a plugin that requires a token (as
 * `authorization` does with `require_authentication`) lets an operation made
 * only of introspection fields through without one.
 */
export const INTROSPECTION_WITHOUT_TOKEN = new StateKey<boolean>('authentication-introspection-without-token');

/** Scopes of a `scope` claim: a space-separated string or an array of strings; anything else gives none. */
export function scopesOf(claim: unknown): ReadonlySet<string> {
  if (typeof claim === 'string') return new Set(claim.split(' ').filter((scope) => scope !== ''));
  if (Array.isArray(claim)) return new Set(claim.filter((scope): scope is string => typeof scope === 'string' && scope !== ''));
  return new Set();
}
