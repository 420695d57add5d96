/**
 * One identity provider's key set: fetched at startup and every
 * `refresh_interval` in the background, fetched again (at most once per
 * `min_refetch_interval`, one fetch shared by all the requests waiting) when
 * a token names a `kid` it does not hold, or when no key it holds for the
 * token verifies its signature (a rotation that reused the kid). A fetched
 * set replaces the one before whole (a withdrawn key verifies nothing more),
 * and a set whose keys differ gets a new `generation`. A
 * failed fetch keeps the keys fetched before; with none ever fetched, no
 * token verifies (never access without a checked signature). Broken keys
 * of a fetched set are left out (usable-keys.ts), with one warning per fetch.
 * A `user:password@` in the URL is sent as HTTP Basic authorization; the
 * URL is logged and shown without it.
 */
import { createLocalJWKSet, errors, type CryptoKey, type JWTVerifyGetKey } from 'jose';
import { readResponseText, splitUrlCredentials, stripUrlCredentials, type Logger, type UrlWithoutCredentials } from '../../src/index.js';
import type { JwksProviderConfig } from './config.js';
import { usableKeys } from './usable-keys.js';

/** The largest JWKS document accepted, decoded (a set of a few dozen keys is some 20 KB). */
const MAX_JWKS_BYTES = 1024 * 1024;
/**
 * Keys tried for one token when several match its `kid` (or its lack of
 * one): a client choosing a kid-less token cannot make a large set cost one
 * signature check per key.
 */
export const MAX_KEYS_PER_TOKEN = 10;

/** The protected header of a token (`alg`, `kid`). */
export type TokenHeader = Parameters<JWTVerifyGetKey>[0];

/** A key a token's signature is checked with. */
export type VerifyKey = CryptoKey | Uint8Array;

/** The keys of one set matching a token, with the generation of that set. */
export interface HeldKeys {
  readonly keys: readonly VerifyKey[];
  /** `JwksProvider.generation` of the set they come from. */
  readonly generation: number;
}

/** A fetched key set. */
interface KeySet {
  readonly lookup: ReturnType<typeof createLocalJWKSet>;
  /** The usable keys as published, serialised: a fetch that returns the same keys keeps this set. */
  readonly fingerprint: string;
  readonly generation: number;
}

export class JwksProvider {
  /** The JWKS URL as logged and shown (in `AuthenticatedIdentity.provider` too): without `user:password@`. */
  readonly url: string;
  /** What is requested: the URL without userinfo, and the Basic authorization the userinfo means. */
  private readonly target: UrlWithoutCredentials;
  readonly algorithms: ReadonlySet<string>;
  private set: KeySet | undefined;
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private pending: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Kids whose key failed to import at lookup in the current set (warned about once). */
  private readonly unusable = new Set<string>();

  constructor(
    readonly config: JwksProviderConfig,
    algorithms: readonly string[],
    private readonly log: Logger,
  ) {
    this.url = stripUrlCredentials(config.url);
    this.target = splitUrlCredentials(config.url);
    this.algorithms = new Set(algorithms);
  }

  /** True once a key set was fetched (it stays until a newer one replaces it). */
  get ready(): boolean {
    return this.set !== undefined;
  }

  /**
   * Changes whenever a fetch brings keys that differ from those held (0
   * before the first): a token verified with the keys of an older generation
   * is verified again, and a retry with the same generation is not worth it.
   */
  get generation(): number {
    return this.set?.generation ?? 0;
  }

  /** Starts the first fetch (not awaited: a provider that is down does not stop startup) and the refresh timer. */
  start(): Promise<boolean> {
    const first = this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.config.refresh_interval);
    this.timer.unref();
    return first;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  /** Fetches the key set now (one fetch at a time). True when it succeeded. */
  refresh(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    this.pending ??= this.load().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** True when `fetchedKeys` would wait for a fetch: one is under way, or the rate limit allows a new one. */
  get canFetch(): boolean {
    if (this.stopped) return false;
    return this.pending !== undefined || Date.now() - this.lastAttempt >= this.config.min_refetch_interval;
  }

  /**
   * True when keys newer than those of generation `seen` may be had for a
   * token: the set changed since, or `fetchedKeys` would wait for a fetch.
   */
  mayHaveNewerThan(seen: number): boolean {
    return this.generation !== seen || this.canFetch;
  }

  /** The keys of the set held now that match a token with this header (none, one, or several for a shared kid); never fetches. */
  async heldKeys(header: TokenHeader): Promise<HeldKeys> {
    const set = this.set;
    if (!set) return { keys: [], generation: 0 };
    return { keys: await this.matching(set, header), generation: set.generation };
  }

  /**
   * The matching keys of a set newer than generation `seen` (the one the
   * token was already checked with): the set held now when it is newer;
   * else after the fetch under way, or a new one when the rate limit allows
   * it. None when neither brings other keys: checking the same keys again
   * would only repeat the outcome. Concurrent callers share the one fetch.
   */
  async fetchedKeys(header: TokenHeader, seen: number): Promise<HeldKeys> {
    if (this.generation === seen) {
      if (this.pending) await this.pending;
      else if (this.canFetch) await this.refresh();
      if (this.generation === seen) return { keys: [], generation: seen };
    }
    return this.heldKeys(header);
  }

  private async matching(set: KeySet, header: TokenHeader): Promise<VerifyKey[]> {
    try {
      return [await set.lookup(header, undefined as unknown as Parameters<JWTVerifyGetKey>[1])];
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) return [];
      if (error instanceof errors.JWKSMultipleMatchingKeys) {
        // jose yields each matching key that imports.
        const found: VerifyKey[] = [];
        for await (const key of error) {
          found.push(key);
          if (found.length === MAX_KEYS_PER_TOKEN) break;
        }
        return found;
      }
      // A key that passed the checks at load but still does not import: unusable, as an unknown kid.
      this.warnUnusable(header.kid, error);
      return [];
    }
  }

  private warnUnusable(kid: unknown, error: unknown): void {
    const name = typeof kid === 'string' ? kid : '(none)';
    if (this.unusable.has(name)) return;
    this.unusable.add(name);
    const reason = (error as { code?: string }).code ?? (error instanceof Error ? error.name : 'unknown error');
    this.log.warn({ url: this.url, skipped: [{ key: name, reason: `it does not import (${reason})` }] }, 'JWKS keys skipped: not usable');
  }

  private async load(): Promise<boolean> {
    this.lastAttempt = Date.now();
    try {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (this.target.authorization !== undefined) headers.authorization = this.target.authorization;
      const response = await fetch(this.target.url, { headers, signal: AbortSignal.timeout(this.config.timeout) });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status}`);
      }
      const { keys, skipped } = await usableKeys(JSON.parse(await readResponseText(response, MAX_JWKS_BYTES)) as unknown);
      if (skipped.length > 0) this.log.warn({ url: this.url, skipped }, 'JWKS keys skipped: not usable');
      // The new set replaces the old one whole (never merged): a key it no longer lists verifies nothing more.
      // Keys in any order are the same set (an IdP may list them differently from one fetch to the next).
      const fingerprint = keys
        .map((key) => JSON.stringify(key))
        .sort()
        .join('\n');
      const changed = this.set?.fingerprint !== fingerprint;
      if (changed) {
        this.set = { lookup: createLocalJWKSet({ keys }), fingerprint, generation: this.generation + 1 };
        this.unusable.clear();
      }
      this.log.debug({ url: this.url, keys: keys.length, changed }, 'JWKS fetched');
      return true;
    } catch (error) {
      const reason = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer within ${this.config.timeout}ms` : error.message) : String(error);
      this.log.warn(
        { url: this.url, reason, keeping_previous_keys: this.set !== undefined },
        this.set ? 'JWKS fetch failed; the keys fetched before stay in use' : 'JWKS fetch failed; tokens of this provider are refused until it succeeds',
      );
      return false;
    }
  }
}
