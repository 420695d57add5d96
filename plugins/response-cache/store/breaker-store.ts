import type { Logger } from '../../../src/index.js';
import type { CacheStore, EntryWrite, StoredEntry } from './cache-store.js';
import { type Progress, withDeadline } from './deadline.js';

/** Settings of `BreakerCacheStore` (`response_cache.circuit_breaker`, durations in ms). */
export interface BreakerSettings {
  /** Failed or timed-out operations in a row that open the breaker. */
  readonly failureThreshold: number;
  /** How long the breaker stays open before one probe is let through. */
  readonly coolDownMs: number;
  /** Longest wait for one operation (for an invalidation: for each answer of the store); longer counts as a failure. */
  readonly timeoutMs: number;
}

/** The breaker's state: `closed` (calls go through), `open` (none do), `half_open` (one probe is out). */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** What an operation refused by an open breaker rejects with. */
export class BreakerOpenError extends Error {
  constructor(untilMs: number) {
    super(`shared store skipped: the circuit breaker is open for ${Math.max(0, untilMs - Date.now())}ms more`);
    this.name = 'BreakerOpenError';
  }
}

/**
 * A circuit breaker around the shared store. Closed, every operation runs
 * with a deadline (the Redis client's own timeout covers only the wait
 * before a command is sent, so a frozen server would hold every request);
 * `failureThreshold` failures or timeouts in a row open it. Open, every
 * operation fails at once without touching Redis for `coolDownMs`. Then it
 * is half-open: the next operation is the probe (the others still fail at
 * once); its success closes the breaker, its failure opens it again for
 * another cool-down.
 *
 * Invalidations go through the breaker too (open: they fail at once and the
 * endpoint answers 503, "send it again"), with the same deadline measured
 * between the store's answers: a long invalidation the store keeps answering
 * runs to its end, one the store stopped answering fails after `timeoutMs`
 * and counts as a failure. Its work may still complete later; sending it
 * again is harmless.
 */
export class BreakerCacheStore implements CacheStore {
  readonly provider: CacheStore['provider'];
  private current: BreakerState = 'closed';
  private failures = 0;
  private openUntil = 0;
  private probing = false;
  /** Reports `half_open` when the cool-down ends (even with no request to notice). */
  private coolDownTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: CacheStore,
    private readonly settings: BreakerSettings,
    private readonly log: Logger,
    /** Told every state change (the state gauge). */
    private readonly onState: (state: BreakerState) => void = () => undefined,
  ) {
    this.provider = store.provider;
    onState('closed');
  }

  /** The breaker's state now (an open breaker past its cool-down reads `half_open`). */
  get state(): BreakerState {
    if (this.current === 'open' && Date.now() >= this.openUntil) return 'half_open';
    return this.current;
  }

  getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>> {
    return this.call(() => this.store.getMany(keys), 'read');
  }

  epoch(): Promise<number> {
    return this.call(() => this.store.epoch(), 'epoch read');
  }

  write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    return this.call(() => this.store.write(entries, since), 'write');
  }

  invalidate(indexes: readonly string[], progress?: Progress): Promise<string[]> {
    return this.call(
      (answered) =>
        this.store.invalidate(indexes, () => {
          answered();
          progress?.();
        }),
      'invalidation',
    );
  }

  close(): Promise<void> {
    clearTimeout(this.coolDownTimer);
    return this.store.close();
  }

  private async call<T>(operation: (progress: Progress) => Promise<T>, what: string): Promise<T> {
    let probe = false;
    if (this.current !== 'closed') {
      if (Date.now() < this.openUntil || this.probing) throw new BreakerOpenError(this.openUntil);
      probe = true;
      this.probing = true;
      this.current = 'half_open';
      this.onState('half_open');
    }
    try {
      const ms = this.settings.timeoutMs;
      const result = await withDeadline(operation, ms, () => new Error(`shared store ${what} took longer than ${ms}ms to answer`));
      this.succeeded(probe);
      return result;
    } catch (error) {
      this.failed(probe, error);
      throw error;
    } finally {
      if (probe) this.probing = false;
    }
  }

  private succeeded(probe: boolean): void {
    this.failures = 0;
    if (probe || this.current !== 'closed') {
      this.current = 'closed';
      clearTimeout(this.coolDownTimer);
      this.onState('closed');
      this.log.info('Response cache circuit breaker closed: the shared store answers again');
    }
  }

  private failed(probe: boolean, error: unknown): void {
    this.failures++;
    if (!probe && (this.current !== 'closed' || this.failures < this.settings.failureThreshold)) return;
    const reopened = this.current !== 'closed';
    this.current = 'open';
    this.openUntil = Date.now() + this.settings.coolDownMs;
    this.onState('open');
    clearTimeout(this.coolDownTimer);
    this.coolDownTimer = setTimeout(() => {
      if (this.current === 'open') this.onState('half_open');
    }, this.settings.coolDownMs);
    this.coolDownTimer.unref();
    this.log.warn(
      {
        err: error instanceof Error ? error.message : String(error),
        failures: this.failures,
        cool_down_ms: this.settings.coolDownMs,
      },
      reopened ? 'Response cache circuit breaker probe failed: open again' : 'Response cache circuit breaker open: no shared store calls during the cool-down',
    );
  }
}
