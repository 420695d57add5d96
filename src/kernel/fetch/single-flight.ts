/**
 * Shares one in-flight call among identical concurrent callers: the second
 * caller with the same key waits for the first one's answer instead of
 * sending its own. Only for side-effect-free calls (queries).
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  run(key: string, call: () => Promise<T>): Promise<T> {
    const existing = this.inFlight.get(key);
    if (existing) return existing;
    const promise = call().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, promise);
    return promise;
  }

  /** Calls now in flight (for tests and metrics). */
  get size(): number {
    return this.inFlight.size;
  }
}
