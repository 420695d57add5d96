/**
 * Token verification: the header names an accepted algorithm, a provider
 * allowing it holds the key, the signature verifies, `exp`/`nbf` hold
 * (with `clock_skew`), and `iss`/`aud` match where configured. Verified
 * tokens are remembered (bounded) until they expire or the provider's
 * refresh interval passes, so a repeated token costs a map lookup.
 */
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { scopesOf, type AuthenticatedIdentity } from './identity.js';
import type { JwksProvider, TokenHeader } from './jwks-provider.js';

/** A token that does not verify; the message is the reason, for the client. */
export class TokenError extends Error {
  override readonly name = 'TokenError';
}

/** Verified tokens remembered per router process. */
const VERIFIED_TOKENS = 10_000;
/** Estimated heap of the remembered tokens and identities: 10,000 tokens of 1 KB fit, fewer long ones. */
const VERIFIED_BYTES = 64 * 1024 * 1024;
/** Longer tokens are refused without being read (real ones are a few KB). */
const MAX_TOKEN_LENGTH = 16 * 1024;

interface Verified {
  readonly identity: AuthenticatedIdentity;
  /** Milliseconds since the epoch after which the token is verified again. */
  readonly until: number;
}

export class TokenVerifier {
  private readonly verified = new LRUCache<string, Verified>({
    max: VERIFIED_TOKENS,
    maxSize: VERIFIED_BYTES,
    // The token (key) and its decoded claims, which are at most its length in text but larger as objects.
    sizeCalculation: (_entry, token) => 512 + token.length * 6,
  });

  constructor(
    private readonly providers: readonly JwksProvider[],
    private readonly clockSkewMs: number,
  ) {}

  /** The identity of a token verified before and still fresh; undefined otherwise. */
  remembered(token: string): AuthenticatedIdentity | undefined {
    const entry = this.verified.get(token);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.identity;
    this.verified.delete(token);
    return undefined;
  }

  /** Verifies a token; throws `TokenError` with the reason when it is not valid. */
  async verify(token: string): Promise<AuthenticatedIdentity> {
    const known = this.remembered(token);
    if (known) return known;
    if (token.length > MAX_TOKEN_LENGTH) throw new TokenError('the token is too long');
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw new TokenError('the token is not a signed JWT');
    }
    const alg = header.alg;
    if (typeof alg !== 'string') throw new TokenError('the token names no algorithm');
    const candidates = this.providers.filter((provider) => provider.algorithms.has(alg));
    if (candidates.length === 0) throw new TokenError(`algorithm ${alg} is not accepted`);
    for (const provider of candidates) {
      const key = await provider.key(header as TokenHeader);
      if (!key) continue;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: [...provider.algorithms],
          clockTolerance: Math.floor(this.clockSkewMs / 1000),
          ...(provider.config.issuer === undefined ? {} : { issuer: provider.config.issuer }),
          ...(provider.config.audience === undefined ? {} : { audience: provider.config.audience }),
        }));
      } catch (error) {
        throw new TokenError(reasonOf(error));
      }
      return this.remember(token, payload, provider);
    }
    if (!candidates.some((provider) => provider.ready)) throw new TokenError('no signing keys are available to verify the token (the key set could not be fetched)');
    throw new TokenError(header.kid === undefined ? 'no key verifies the token' : `no key with kid "${header.kid}" is known`);
  }

  private remember(token: string, payload: JWTPayload, provider: JwksProvider): AuthenticatedIdentity {
    const identity: AuthenticatedIdentity = Object.freeze({
      claims: Object.freeze({ ...payload }),
      scopes: scopesOf(payload.scope),
      provider: provider.url,
      expiresAt: typeof payload.exp === 'number' ? payload.exp : undefined,
    });
    const now = Date.now();
    let until = now + provider.config.refresh_interval;
    if (identity.expiresAt !== undefined) until = Math.min(until, identity.expiresAt * 1000);
    this.verified.set(token, { identity, until });
    return identity;
  }
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: string }).code;
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'the token has expired';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'the token signature does not verify';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'the token algorithm is not accepted';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const claim = (error as { claim?: string }).claim;
      if (claim === 'nbf') return 'the token is not valid yet';
      if (claim === 'iss') return 'the token issuer is not accepted';
      if (claim === 'aud') return 'the token audience is not accepted';
      return `the token claim "${claim ?? 'unknown'}" is not valid`;
    }
    default:
      return 'the token is not valid';
  }
}
