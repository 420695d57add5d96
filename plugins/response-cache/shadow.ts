import type { Counter, Logger, Metrics } from '../../src/index.js';
import { LogSampler } from './log-sampler.js';

/** The line logged (sampled) when a cached entry differs from the subgraph's fresh answer. */
export const SHADOW_MISMATCH_MESSAGE = 'Response cache shadow mode: cached entry differs from the subgraph answer';

/** Shortest gap between two mismatch lines. */
const LOG_INTERVAL_MS = 1000;

/**
 * `response_cache.shadow_mode`: every hit is compared with the answer the
 * subgraph gave for the same request. Counts comparisons and mismatches per
 * subgraph and type (`switchyard_response_cache_shadow_compared_total`,
 * `_shadow_mismatches_total`), and logs a mismatch at most once a second
 * naming the entry's key.
 */
export class ShadowMode {
  private readonly compared: Counter;
  private readonly mismatched: Counter;
  private readonly sampler = new LogSampler(LOG_INTERVAL_MS);

  constructor(
    metrics: Metrics,
    private readonly log: Logger,
  ) {
    const labels = ['subgraph', 'type'];
    this.compared = metrics.counter('response_cache_shadow_compared_total', 'Shadow mode: cache hits compared with the subgraph answer', labels);
    this.mismatched = metrics.counter('response_cache_shadow_mismatches_total', 'Shadow mode: cache hits that differed from the subgraph answer', labels);
  }

  /** Compares one cached value with the fresh one; true when they match. */
  compare(subgraph: string, type: string, key: string, cached: unknown, fresh: unknown): boolean {
    this.compared.inc({ subgraph, type });
    if (sameJson(cached, fresh)) return true;
    this.mismatched.inc({ subgraph, type });
    const skipped = this.sampler.take();
    if (skipped !== undefined) this.log.warn({ subgraph, type, key, ...(skipped > 0 ? { mismatches_not_logged: skipped } : {}) }, SHADOW_MISMATCH_MESSAGE);
    return false;
  }
}

/** Deep equality of JSON values (object key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], other[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
  return true;
}
