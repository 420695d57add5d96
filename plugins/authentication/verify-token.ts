/**
 * Token verification: the header names an accepted algorithm, a provider
 * allowing it holds the key, the signature verifies, `exp`/`nbf` hold
 * (with `clock_skew`), and `iss`/`aud` match where configured. Keys the
 * providers hold are tried first; only a token whose kid none holds waits
 * for fetches, of the providers that could accept it. Verified
 * tokens are remembered (bounded) until they expire or the provider's
 * refresh interval passes, so a repeated token costs a map lookup.
 */
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { scopesOf, type AuthenticatedIdentity } from './identity.js';
import type { JwksProvider, TokenHeader, VerifyKey } from './jwks-provider.js';

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
    const outcome = new Outcome();
    // First the keys held now, provider by provider in order: a provider that is fetching does not hold up the others' tokens.
    for (const provider of candidates) {
      const identity = await this.check(token, provider, await provider.heldKeys(header as TokenHeader), outcome);
      if (identity) return identity;
    }
    if (!outcome.keyFound) {
      // No provider holds the kid: wait for the fetches of those that could accept the token, taking the first that finds it.
      const issuer = unverifiedIssuer(token);
      const fetching = candidates.filter((provider) => provider.canFetch && issuerMayMatch(provider, issuer));
      const lookups = fetching.map((provider) => provider.fetchedKeys(header as TokenHeader).then((keys) => ({ provider, keys })));
      for await (const { provider, keys } of inCompletionOrder(lookups)) {
        const identity = await this.check(token, provider, keys, outcome);
        if (identity) return identity;
      }
    }
    if (outcome.refusal) throw outcome.refusal;
    if (!candidates.some((provider) => provider.ready)) throw new TokenError('no signing keys are available to verify the token (the key set could not be fetched)');
    throw new TokenError(typeof header.kid === 'string' ? `no key with kid "${header.kid}" is known` : 'no key verifies the token');
  }

  /**
   * Checks the token with each of a provider's matching keys: the identity
   * when one verifies it; otherwise undefined, the reason kept in `outcome`
   * (a refusal on claims, made after a key verified the signature, outranks
   * a signature no key verified).
   */
  private async check(token: string, provider: JwksProvider, keys: readonly VerifyKey[], outcome: Outcome): Promise<AuthenticatedIdentity | undefined> {
    if (keys.length > 0) outcome.keyFound = true;
    for (const key of keys) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [...provider.algorithms],
          // JWT times are whole seconds: a sub-second skew counts as one second rather than none.
          clockTolerance: Math.ceil(this.clockSkewMs / 1000),
          ...(provider.config.issuer === undefined ? {} : { issuer: provider.config.issuer }),
          ...(provider.config.audience === undefined ? {} : { audience: provider.config.audience }),
        });
        return this.remember(token, payload, provider);
      } catch (error) {
        const signatureOnly = isSignatureFailure(error);
        if (outcome.refusal === undefined || (!signatureOnly && outcome.signatureOnly)) {
          outcome.refusal = new TokenError(reasonOf(error));
          outcome.signatureOnly = signatureOnly;
        }
      }
    }
    return undefined;
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

/** What the keys tried so far for one token found. */
class Outcome {
  /** Some provider held a key matching the token's header. */
  keyFound = false;
  /** The reason to give when no key verifies the token. */
  refusal: TokenError | undefined;
  /** The refusal is a signature that no key verified (a claim refusal means a key did). */
  signatureOnly = false;
}

/** The signature did not verify with this key (or the key cannot check it): another key may still verify it. */
function isSignatureFailure(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' || code === undefined;
}

/** The `iss` the token claims, before it is verified: only to skip waiting on providers that would refuse it anyway. */
function unverifiedIssuer(token: string): string | undefined {
  try {
    const { iss } = decodeJwt(token);
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** A provider checking `iss` accepts only tokens claiming one of its issuers. */
function issuerMayMatch(provider: JwksProvider, issuer: string | undefined): boolean {
  const accepted = provider.config.issuer;
  if (accepted === undefined) return true;
  return issuer !== undefined && (typeof accepted === 'string' ? accepted === issuer : accepted.includes(issuer));
}

/** The values of the promises, as each settles (they never reject here). */
async function* inCompletionOrder<T>(promises: readonly Promise<T>[]): AsyncGenerator<T> {
  const waiting = new Map(promises.map((promise, index) => [index, promise.then((value) => ({ index, value }))]));
  while (waiting.size > 0) {
    const { index, value } = await Promise.race(waiting.values());
    waiting.delete(index);
    yield value;
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
