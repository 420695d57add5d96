import type { Logger } from '../../src/index.js';
import type { CacheMetrics } from './cache-metrics.js';

/** The warning the spec fixes for a failing store. */
export const DEGRADED_MESSAGE = 'Response cache degraded, serving from the subgraph instead';

/** Shortest gap between two degradation warnings. */
const WARN_INTERVAL_MS = 1000;

/**
 * Store failures on the request path: each is counted, the warning is
 * logged at most once per second, and the first success afterwards logs
 * that the store is back.
 */
export class Degradation {
  private lastWarnAt = Number.NEGATIVE_INFINITY;
  private degraded = false;

  constructor(
    private readonly log: Logger,
    private readonly metrics: CacheMetrics,
  ) {}

  /** A store operation failed; the request goes on without the cache. */
  report(error: unknown, operation: 'read' | 'write' | 'invalidate'): void {
    this.degraded = true;
    this.metrics.storeError(operation);
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_INTERVAL_MS) return;
    this.lastWarnAt = now;
    this.log.warn({ err: error instanceof Error ? error.message : String(error), operation }, DEGRADED_MESSAGE);
  }

  /** A store operation succeeded. */
  succeeded(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.log.info('Response cache store reachable again');
  }
}
