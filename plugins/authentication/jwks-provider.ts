/**
 * One identity provider's key set: fetched at startup and every
 * `refresh_interval` in the background, fetched again (at most once per
 * `min_refetch_interval`) when a token names a `kid` it does not hold. A
 * failed fetch keeps the keys fetched before; with none ever fetched, no
 * token verifies (never access without a checked signature).
 */
import { createLocalJWKSet, type CryptoKey, type JWTVerifyGetKey } from 'jose';
import type { Logger } from '../../src/index.js';
import type { JwksProviderConfig } from './config.js';

/** The largest JWKS document accepted (a set of a few dozen keys is some 20 KB). */
const MAX_JWKS_BYTES = 1024 * 1024;

/** The protected header of a token (`alg`, `kid`). */
export type TokenHeader = Parameters<JWTVerifyGetKey>[0];

export class JwksProvider {
  readonly url: string;
  readonly algorithms: ReadonlySet<string>;
  private keys: ReturnType<typeof createLocalJWKSet> | undefined;
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private pending: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly config: JwksProviderConfig,
    algorithms: readonly string[],
    private readonly log: Logger,
  ) {
    this.url = config.url;
    this.algorithms = new Set(algorithms);
  }

  /** True once a key set was fetched (it stays until a newer one replaces it). */
  get ready(): boolean {
    return this.keys !== undefined;
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

  /**
   * The key that verifies a token with this header; undefined when the set
   * holds none for it, even after fetching it again (when the rate limit allows).
   */
  async key(header: TokenHeader): Promise<CryptoKey | Uint8Array | undefined> {
    const found = await this.lookup(header);
    if (found) return found;
    if (this.pending) await this.pending;
    else if (Date.now() - this.lastAttempt >= this.config.min_refetch_interval) await this.refresh();
    else return undefined;
    return this.lookup(header);
  }

  private async lookup(header: TokenHeader): Promise<CryptoKey | Uint8Array | undefined> {
    if (!this.keys) return undefined;
    try {
      return await this.keys(header, undefined as unknown as Parameters<JWTVerifyGetKey>[1]);
    } catch (error) {
      // No key (or several keys) for this kid and algorithm: not this set's token.
      const code = (error as { code?: string }).code;
      if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') return undefined;
      throw error;
    }
  }

  private async load(): Promise<boolean> {
    this.lastAttempt = Date.now();
    try {
      const response = await fetch(this.url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.config.timeout) });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status}`);
      }
      const text = await response.text();
      if (text.length > MAX_JWKS_BYTES) throw new Error(`the document is larger than ${MAX_JWKS_BYTES} bytes`);
      const body = JSON.parse(text) as unknown;
      if (typeof body !== 'object' || body === null || !Array.isArray((body as { keys?: unknown }).keys)) {
        throw new Error('not a JWKS document (no "keys" array)');
      }
      this.keys = createLocalJWKSet(body as Parameters<typeof createLocalJWKSet>[0]);
      this.log.debug({ url: this.url, keys: (body as { keys: unknown[] }).keys.length }, 'JWKS fetched');
      return true;
    } catch (error) {
      const reason = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer within ${this.config.timeout}ms` : error.message) : String(error);
      this.log.warn(
        { url: this.url, reason, keeping_previous_keys: this.keys !== undefined },
        this.keys ? 'JWKS fetch failed; the keys fetched before stay in use' : 'JWKS fetch failed; tokens of this provider are refused until it succeeds',
      );
      return false;
    }
  }
}
