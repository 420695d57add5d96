/**
 * In-process invalidation indexes of the memory provider: index id -> keys,
 * and key -> index ids of its latest write, so an entry is listed only
 * under the indexes of its latest write and leaves them when it is evicted.
 */
export class MemoryIndex {
  private readonly members = new Map<string, Set<string>>();
  private readonly listed = new Map<string, readonly string[]>();

  /** Lists `key` under exactly `indexes` (replacing what an earlier write listed). */
  set(key: string, indexes: readonly string[]): void {
    this.remove(key);
    if (indexes.length === 0) return;
    this.listed.set(key, indexes);
    for (const id of indexes) {
      let keys = this.members.get(id);
      if (!keys) this.members.set(id, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Unlists `key` everywhere. */
  remove(key: string): void {
    const indexes = this.listed.get(key);
    if (!indexes) return;
    this.listed.delete(key);
    for (const id of indexes) {
      const keys = this.members.get(id);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.members.delete(id);
    }
  }

  /** Keys listed under any of the indexes (each once). */
  keysOf(indexes: readonly string[]): Set<string> {
    const keys = new Set<string>();
    for (const id of indexes) for (const key of this.members.get(id) ?? []) keys.add(key);
    return keys;
  }

  /** Number of index ids in use (for tests of bounded growth). */
  get size(): number {
    return this.members.size;
  }
}

/**
 * Invalidation epochs kept in process: a counter bumped by every
 * invalidation, and per index the epoch of its last invalidation. A mark
 * is only needed while a fetch that started before it can still write, so
 * marks older than `markTtlMs` are dropped.
 */
export class InvalidationMarks {
  private current = 0;
  /** Epoch of the last mark on every index (a whole-cache clear); 0: none. */
  private everything = 0;
  private readonly marks = new Map<string, { readonly epoch: number; readonly at: number }>();

  constructor(private readonly markTtlMs: number) {}

  get epoch(): number {
    return this.current;
  }

  /** Starts an invalidation of `indexes`: bumps the epoch and marks them with it. */
  bump(indexes: readonly string[]): number {
    const now = Date.now();
    for (const [id, mark] of this.marks) if (now - mark.at > this.markTtlMs) this.marks.delete(id);
    const epoch = ++this.current;
    for (const id of indexes) this.marks.set(id, { epoch, at: now });
    return epoch;
  }

  /** Marks every index at once (the cache was cleared): a write from a fetch that started before is dropped. */
  bumpAll(): number {
    this.everything = ++this.current;
    return this.everything;
  }

  /** Whether any of the indexes was invalidated after epoch `since`. */
  touchedSince(indexes: readonly string[], since: number): boolean {
    if (this.everything > since) return true;
    for (const id of indexes) {
      const mark = this.marks.get(id);
      if (mark && mark.epoch > since) return true;
    }
    return false;
  }
}
