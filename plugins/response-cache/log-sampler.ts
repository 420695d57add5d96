/**
 * At most one log line per interval for a warning that can repeat on every
 * request (a shadow-mode mismatch, an unreadable entry): `take()` says
 * whether to log now and how many were left unlogged since the last line.
 */
export class LogSampler {
  private lastAt = Number.NEGATIVE_INFINITY;
  private skipped = 0;

  constructor(private readonly intervalMs: number) {}

  /** The number left unlogged since the last line when this one is to be logged; undefined when it is not. */
  take(now = Date.now()): number | undefined {
    if (now - this.lastAt < this.intervalMs) {
      this.skipped++;
      return undefined;
    }
    this.lastAt = now;
    const skipped = this.skipped;
    this.skipped = 0;
    return skipped;
  }
}
