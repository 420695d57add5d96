import type { CacheStore, EntryWrite, StoredEntry } from './cache-store.js';
import { type Progress, withDeadline } from './deadline.js';

/**
 * A store whose operations give up after `ms` without an answer (the
 * deadline of `deadline.ts`; for an invalidation, between the store's
 * answers). The store without the circuit breaker.
 *
 * After an operation gives up, the next ones fail at once for `ms` instead
 * of each waiting out its own deadline and piling more commands onto a
 * connection that answers none: then one operation tries again. So a store
 * that stopped answering costs one request in a while a second, not every
 * request. An invalidation that gave up may still complete later; the
 * endpoint answers 503 and sending it again is harmless.
 */
export class DeadlineCacheStore implements CacheStore {
  readonly provider: CacheStore['provider'];
  private skipUntil = 0;

  constructor(
    private readonly store: CacheStore,
    private readonly ms: number,
  ) {
    this.provider = store.provider;
  }

  getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>> {
    return this.withDeadline(() => this.store.getMany(keys), 'read');
  }

  epoch(): Promise<number> {
    return this.withDeadline(() => this.store.epoch(), 'epoch read');
  }

  write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    return this.withDeadline(() => this.store.write(entries, since), 'write');
  }

  invalidate(indexes: readonly string[], progress?: Progress): Promise<string[]> {
    return this.withDeadline(
      (answered) =>
        this.store.invalidate(indexes, () => {
          answered();
          progress?.();
        }),
      'invalidation',
    );
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private withDeadline<T>(operation: (progress: Progress) => Promise<T>, what: string): Promise<T> {
    if (Date.now() < this.skipUntil) return Promise.reject(new Error(`shared store skipped: it did not answer within ${this.ms}ms a moment ago`));
    return withDeadline(operation, this.ms, () => {
      this.skipUntil = Date.now() + this.ms;
      return new Error(`shared store ${what} took longer than ${this.ms}ms to answer`);
    });
  }
}
