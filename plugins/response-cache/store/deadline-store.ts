import type { CacheStore, EntryWrite, StoredEntry } from './cache-store.js';

/**
 * A store whose request-path operations give up after `ms`. The Redis
 * client's own command timeout only covers the wait before a command is
 * sent: a server that stops answering (frozen, overloaded, a half-open
 * connection) would hold every request until the TCP connection dies. A
 * late reply still reaches the client in order, so giving up here cannot
 * mix replies up. Invalidation keeps no deadline: it reports its outcome
 * to the caller, which must not be told "failed" for work that completes.
 */
export class DeadlineCacheStore implements CacheStore {
  readonly provider: CacheStore['provider'];

  constructor(
    private readonly store: CacheStore,
    private readonly ms: number,
  ) {
    this.provider = store.provider;
  }

  getMany(keys: readonly string[]): Promise<Array<StoredEntry | undefined>> {
    return withDeadline(this.store.getMany(keys), this.ms, 'read');
  }

  epoch(): Promise<number> {
    return withDeadline(this.store.epoch(), this.ms, 'epoch read');
  }

  write(entries: readonly EntryWrite[], since: number | undefined): Promise<EntryWrite[]> {
    return withDeadline(this.store.write(entries, since), this.ms, 'write');
  }

  invalidate(indexes: readonly string[]): Promise<string[]> {
    return this.store.invalidate(indexes);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`shared store ${what} took longer than ${ms}ms`)), ms);
  });
  // The abandoned operation may still fail later; its rejection is expected and handled here.
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
