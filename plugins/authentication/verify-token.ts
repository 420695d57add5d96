/**
 * Token verification: the header names an accepted algorithm, a provider
 * allowing it holds the key, the signature verifies, `exp`/`nbf` hold
 * (with `clock_skew`), and `iss`/`aud` match where configured. Keys the
 * providers hold are tried first; only a token whose signature none of them
 * verifies (its kid unknown, or the key under it rotated) waits for fetches,
 * of the providers that could accept it, and is checked with the keys they
 * bring. Verified tokens are remembered (bounded) until they expire, the
 * provider's refresh interval passes, or the provider's key set changes, so
 * a repeated token costs a map lookup.
 */
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { scopesOf, type AuthenticatedIdentity } from './identity.js';
import type { HeldKeys, JwksProvider, TokenHeader } from './jwks-provider.js';

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
  /** The provider whose key verified it, and the generation of its set then: a newer set (a key withdrawn or replaced) verifies it again. */
  readonly provider: JwksProvider;
  readonly generation: number;
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
    if (entry.until > Date.now() && entry.provider.generation === entry.generation) return entry.identity;
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
    /** The generation of each provider's set the token was checked with. */
    const seen = new Map<JwksProvider, number>();
    // First the keys held now, provider by provider in order: a provider that is fetching does not hold up the others' tokens.
    for (const provider of candidates) {
      const held = await provider.heldKeys(header as TokenHeader);
      seen.set(provider, held.generation);
      const identity = await this.check(token, provider, held, outcome);
      if (identity) return identity;
    }
    if (!outcome.decided) {
      // No key held verifies the signature: the kid is unknown, or the provider rotated the key under it (or, without a kid, every key).
      // Wait for the fetches of the providers that could accept the token (one per `min_refetch_interval` each, shared by concurrent
      // requests), or take the newer set one fetched meanwhile, and check the token with those keys, taking the first that verifies it.
      const issuer = unverifiedIssuer(token);
      const fetching = candidates.filter((provider) => issuerMayMatch(provider, issuer) && provider.mayHaveNewerThan(seen.get(provider) ?? 0));
      const lookups = fetching.map((provider) => provider.fetchedKeys(header as TokenHeader, seen.get(provider) ?? 0).then((held) => ({ provider, held })));
      for await (const { provider, held } of inCompletionOrder(lookups)) {
        const identity = await this.check(token, provider, held, outcome);
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
  private async check(token: string, provider: JwksProvider, held: HeldKeys, outcome: Outcome): Promise<AuthenticatedIdentity | undefined> {
    if (held.keys.length > 0) outcome.keyFound = true;
    for (const key of held.keys) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [...provider.algorithms],
          // JWT times are whole seconds: a sub-second skew counts as one second rather than none.
          clockTolerance: Math.ceil(this.clockSkewMs / 1000),
          ...(provider.config.issuer === undefined ? {} : { issuer: provider.config.issuer }),
          ...(provider.config.audience === undefined ? {} : { audience: provider.config.audience }),
        });
        return this.remember(token, payload, provider, held.generation);
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

  private remember(token: string, payload: JWTPayload, provider: JwksProvider, generation: number): AuthenticatedIdentity {
    const identity: AuthenticatedIdentity = Object.freeze({
      claims: Object.freeze({ ...payload }),
      scopes: scopesOf(payload.scope),
      provider: provider.url,
      expiresAt: typeof payload.exp === 'number' ? payload.exp : undefined,
    });
    const now = Date.now();
    let until = now + provider.config.refresh_interval;
    if (identity.expiresAt !== undefined) until = Math.min(until, identity.expiresAt * 1000);
    this.verified.set(token, { identity, until, provider, generation });
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

  /**
   * A key refused the token for something other than its signature (a key
   * verified the signature and a claim failed, or the token is malformed):
   * fresher keys would not change the answer, so none are fetched.
   */
  get decided(): boolean {
    return this.refusal !== undefined && !this.signatureOnly;
  }
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
