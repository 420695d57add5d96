import type { Counter, Gauge, Metrics } from '../../src/index.js';
import type { BreakerState } from './store/breaker-store.js';

/** `switchyard_response_cache_breaker_state` values. */
export const BREAKER_STATE_VALUES: Readonly<Record<BreakerState, number>> = { closed: 0, open: 1, half_open: 2 };

/**
 * Prometheus counters of the response cache, by subgraph and type (root
 * entries count as type `Query`): `switchyard_response_cache_hits_total`,
 * `_misses_total`, `_stores_total`, `_invalidated_total`, and
 * `_store_errors_total{operation}`; the gauge `_breaker_state` (0 closed,
 * 1 open, 2 half-open: the cool-down is over, the next call probes; the
 * highest of the workers under `--workers`). No-ops when metrics are off.
 */
export class CacheMetrics {
  private readonly hitCounter: Counter;
  private readonly missCounter: Counter;
  private readonly storeCounter: Counter;
  private readonly invalidatedCounter: Counter;
  private readonly errorCounter: Counter;
  /** Made on the first report: a cache without a breaker (memory provider) shows no breaker state. */
  private breakerGauge: Gauge | undefined;
  readonly enabled: boolean;

  constructor(private readonly metrics: Metrics) {
    const labels = ['subgraph', 'type'];
    this.enabled = metrics.enabled;
    this.hitCounter = metrics.counter('response_cache_hits_total', 'Entries served from the response cache', labels);
    this.missCounter = metrics.counter('response_cache_misses_total', 'Entries looked up in the response cache and not found', labels);
    this.storeCounter = metrics.counter('response_cache_stores_total', 'Entries written to the response cache', labels);
    this.invalidatedCounter = metrics.counter('response_cache_invalidated_total', 'Entries removed by invalidation requests', labels);
    this.errorCounter = metrics.counter('response_cache_store_errors_total', 'Response cache store operations that failed', ['operation']);
  }

  /** The circuit breaker changed state. */
  breakerState(state: BreakerState): void {
    this.breakerGauge ??= this.metrics.gauge('response_cache_breaker_state', 'Shared store circuit breaker: 0 closed, 1 open, 2 half-open', [], 'max');
    this.breakerGauge.set({}, BREAKER_STATE_VALUES[state]);
  }

  hits(subgraph: string, types: Iterable<string>): void {
    this.count(this.hitCounter, subgraph, types);
  }

  misses(subgraph: string, types: Iterable<string>): void {
    this.count(this.missCounter, subgraph, types);
  }

  stores(subgraph: string, types: Iterable<string>): void {
    this.count(this.storeCounter, subgraph, types);
  }

  invalidated(entries: Iterable<{ subgraph: string; type: string }>): void {
    if (!this.enabled) return;
    for (const { subgraph, type } of entries) this.invalidatedCounter.inc({ subgraph, type });
  }

  storeError(operation: string): void {
    this.errorCounter.inc({ operation });
  }

  /** One increment per type occurrence, grouped. */
  private count(counter: Counter, subgraph: string, types: Iterable<string>): void {
    if (!this.enabled) return;
    const counts = new Map<string, number>();
    for (const type of types) counts.set(type, (counts.get(type) ?? 0) + 1);
    for (const [type, value] of counts) counter.inc({ subgraph, type }, value);
  }
}
