import type { Counter, Histogram, Metrics } from './metrics.js';

/** The kernel's own metrics: operations and subgraph fetches. */
export interface RouterInstruments {
  /** `switchyard_operations_total{outcome}`: outcome is `ok`, `partial` (errors with data) or `error`. */
  readonly operations: Counter;
  /** `switchyard_operation_duration_seconds{method, status}`: the request's HTTP method and the status answered. */
  readonly operationDuration: Histogram;
  /** `switchyard_subgraph_fetches_total{subgraph, outcome}` */
  readonly subgraphFetches: Counter;
  /** `switchyard_subgraph_fetch_duration_seconds{subgraph}` */
  readonly subgraphFetchDuration: Histogram;
}

export function routerInstruments(metrics: Metrics): RouterInstruments | undefined {
  if (!metrics.enabled) return undefined;
  return {
    operations: metrics.counter('operations_total', 'GraphQL operations answered, by outcome', ['outcome']),
    operationDuration: metrics.histogram('operation_duration_seconds', 'Time to answer a GraphQL operation', ['method', 'status']),
    subgraphFetches: metrics.counter(
      'subgraph_fetches_total',
      'Subgraph fetches made for operations, by outcome: one per fetch per request (a shared in-flight call once per request waiting on it, its retries not apart)',
      ['subgraph', 'outcome'],
    ),
    subgraphFetchDuration: metrics.histogram(
      'subgraph_fetch_duration_seconds',
      'Time each subgraph fetch of an operation took, waiting on a shared in-flight call and every retry included',
      ['subgraph'],
    ),
  };
}
