import type { Counter, Metrics } from '../../src/index.js';

/**
 * Prometheus counters of the response cache, by subgraph and type (root
 * entries count as type `Query`): `switchyard_response_cache_hits_total`,
 * `_misses_total`, `_stores_total`, `_invalidated_total`, and
 * `_store_errors_total{operation}`. No-ops when metrics are off.
 */
export class CacheMetrics {
  private readonly hitCounter: Counter;
  private readonly missCounter: Counter;
  private readonly storeCounter: Counter;
  private readonly invalidatedCounter: Counter;
  private readonly errorCounter: Counter;
  readonly enabled: boolean;

  constructor(metrics: Metrics) {
    const labels = ['subgraph', 'type'];
    this.enabled = metrics.enabled;
    this.hitCounter = metrics.counter('response_cache_hits_total', 'Entries served from the response cache', labels);
    this.missCounter = metrics.counter('response_cache_misses_total', 'Entries looked up in the response cache and not found', labels);
    this.storeCounter = metrics.counter('response_cache_stores_total', 'Entries written to the response cache', labels);
    this.invalidatedCounter = metrics.counter('response_cache_invalidated_total', 'Entries removed by invalidation requests', labels);
    this.errorCounter = metrics.counter('response_cache_store_errors_total', 'Response cache store operations that failed', ['operation']);
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
