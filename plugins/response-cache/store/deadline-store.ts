import type { CacheStore, EntryWrite, StoredEntry } from './cache-store.js';

/**
 * A store whose request-path operations give up after `ms`. The Redis
 * client's own command timeout only covers the wait before a command is
 * sent: a server that stops answering (frozen, overloaded, a half-open
 * connection) would hold every request until the TCP connection dies. A
 * late reply still reaches the client in order, so giving up here cannot
 * mix replies up.
 *
 * After an operation gives up, the next ones fail at once for `ms` instead
 * of each waiting out its own deadline and piling more commands onto a
 * connection that answers none: then one operation tries again. So a store
 * that stopped answering costs one request in a while a second, not every
 * request. Invalidation keeps no deadline: it reports its outcome to the
 * caller, which must not be told "failed" for work that completes.
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

  invalidate(indexes: readonly string[]): Promise<string[]> {
    return this.store.invalidate(indexes);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private withDeadline<T>(operation: () => Promise<T>, what: string): Promise<T> {
    if (Date.now() < this.skipUntil) return Promise.reject(new Error(`shared store skipped: it did not answer within ${this.ms}ms a moment ago`));
    const work = operation();
    // The abandoned operation may still fail later; its rejection is expected and handled here.
    work.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.skipUntil = Date.now() + this.ms;
        reject(new Error(`shared store ${what} took longer than ${this.ms}ms`));
      }, this.ms);
    });
    return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
  }
}
