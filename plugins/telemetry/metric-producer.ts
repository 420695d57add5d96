/**
 * OTLP metrics from the router's one set of instruments. The kernel and the
 * plugins record into the router's metric store (src/kernel/metrics, the
 * series of the Prometheus endpoint); at each export this producer reads
 * that store and hands the OpenTelemetry SDK the same values under
 * OpenTelemetry names: semantic-convention names and units where they
 * exist, Prometheus labels renamed to attributes. Nothing is recorded twice
 * and requests pay nothing for OTLP metrics: the conversion runs once per
 * export interval.
 */

import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { AggregationTemporality, DataPointType, type CollectionResult, type MetricData, type MetricProducer, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { Resource } from '@opentelemetry/resources';
import type { Labels, Metrics, MetricSnapshot } from '../../src/index.js';
import type { SubgraphAttributeCache } from './subgraph-attributes.js';

/** How one Prometheus series is named over OTLP. */
interface OtlpName {
  readonly name: string;
  readonly unit: string;
  /** Prometheus label → attribute; labels not listed become `switchyard.<label>`. */
  readonly attributes?: Readonly<Record<string, string>>;
  /** Adjusts a series' attributes after the renaming (types, derived attributes). */
  readonly adjust?: (attributes: Attributes) => void;
}

/**
 * `http.response.status_code` is an integer in the HTTP conventions (a
 * Prometheus label is text), and a 5xx answer is an error: `error.type` is
 * then its status code, as the conventions say for a server without a
 * better name for the error.
 */
function httpServerAttributes(attributes: Attributes): void {
  const status = Number(attributes['http.response.status_code']);
  if (!Number.isInteger(status)) return;
  attributes['http.response.status_code'] = status;
  if (status >= 500) attributes['error.type'] = String(status);
}

const SUBGRAPH = { subgraph: 'switchyard.subgraph.name' };
const CACHE_LABELS = { subgraph: 'switchyard.subgraph.name', type: 'graphql.type.name' };

/**
 * The router's own series and their OpenTelemetry names. Others (plugins'
 * counters) follow the rule of `otlpNameOf`.
 */
export const OTLP_NAMES: Readonly<Record<string, OtlpName>> = {
  switchyard_operation_duration_seconds: {
    name: 'http.server.request.duration',
    unit: 's',
    attributes: { method: 'http.request.method', status: 'http.response.status_code' },
    adjust: httpServerAttributes,
  },
  switchyard_operations_total: { name: 'switchyard.operations', unit: '{operation}', attributes: { outcome: 'switchyard.operation.outcome' } },
  switchyard_subgraph_fetch_duration_seconds: { name: 'http.client.request.duration', unit: 's', attributes: SUBGRAPH },
  switchyard_subgraph_fetches_total: { name: 'switchyard.subgraph.fetches', unit: '{fetch}', attributes: { ...SUBGRAPH, outcome: 'switchyard.fetch.outcome' } },
  switchyard_response_cache_hits_total: { name: 'switchyard.response_cache.hits', unit: '{entry}', attributes: CACHE_LABELS },
  switchyard_response_cache_misses_total: { name: 'switchyard.response_cache.misses', unit: '{entry}', attributes: CACHE_LABELS },
  switchyard_response_cache_stores_total: { name: 'switchyard.response_cache.stores', unit: '{entry}', attributes: CACHE_LABELS },
  switchyard_response_cache_invalidated_total: { name: 'switchyard.response_cache.invalidated', unit: '{entry}', attributes: CACHE_LABELS },
  switchyard_response_cache_partial_hits_total: { name: 'switchyard.response_cache.partial_hits', unit: '{fetch}', attributes: CACHE_LABELS },
  switchyard_response_cache_calls_avoided_total: { name: 'switchyard.response_cache.calls_avoided', unit: '{call}', attributes: CACHE_LABELS },
  switchyard_response_cache_time_saved_seconds_total: { name: 'switchyard.response_cache.time_saved', unit: 's', attributes: CACHE_LABELS },
  switchyard_response_cache_store_errors_total: { name: 'switchyard.response_cache.store_errors', unit: '{error}' },
  switchyard_response_cache_breaker_state: { name: 'switchyard.response_cache.breaker_state', unit: '1' },
};

/** `switchyard_<rest>[_seconds][_total]` → `switchyard.<rest>` (unit `s` for seconds), unless listed in OTLP_NAMES. */
export function otlpNameOf(prometheusName: string): OtlpName {
  const known = OTLP_NAMES[prometheusName];
  if (known) return known;
  let rest = prometheusName.replace(/^switchyard_/, '').replace(/_total$/, '');
  const seconds = rest.endsWith('_seconds');
  if (seconds) rest = rest.slice(0, -'_seconds'.length);
  return { name: `switchyard.${rest}`, unit: seconds ? 's' : '1' };
}

const SCOPE = { name: 'switchyard' };

export class RouterMetricProducer implements MetricProducer {
  /** Cumulative series start when the store does: about when the router started. */
  private readonly startTime: HrTime = millisToHrTime(Date.now());

  constructor(
    private readonly metrics: Metrics,
    private readonly subgraphs: SubgraphAttributeCache,
    private readonly resource: Resource,
  ) {}

  async collect(): Promise<CollectionResult> {
    const snapshots = await this.metrics.collect();
    const endTime = millisToHrTime(Date.now());
    const metrics = snapshots.map((snapshot) => this.metricData(snapshot, endTime));
    const resourceMetrics: ResourceMetrics = { resource: this.resource, scopeMetrics: [{ scope: SCOPE, metrics }] };
    return { resourceMetrics, errors: [] };
  }

  private metricData(snapshot: MetricSnapshot, endTime: HrTime): MetricData {
    const otlp = otlpNameOf(snapshot.name);
    const descriptor = { name: otlp.name, description: snapshot.help, unit: otlp.unit, valueType: ValueType.DOUBLE };
    const { startTime } = this;
    const aggregationTemporality = AggregationTemporality.CUMULATIVE;
    if (snapshot.kind === 'histogram') {
      return {
        descriptor,
        aggregationTemporality,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: snapshot.series.map((s) => ({
          startTime,
          endTime,
          attributes: this.attributesOf(s.labels, otlp),
          value: { buckets: { boundaries: [...s.bounds], counts: [...s.counts] }, count: s.count, sum: s.sum },
        })),
      };
    }
    const dataPoints = snapshot.series.map((s) => ({ startTime, endTime, attributes: this.attributesOf(s.labels, otlp), value: s.value }));
    if (snapshot.kind === 'gauge') return { descriptor, aggregationTemporality, dataPointType: DataPointType.GAUGE, dataPoints };
    return { descriptor, aggregationTemporality, dataPointType: DataPointType.SUM, dataPoints, isMonotonic: true };
  }

  private attributesOf(labels: Labels, otlp: OtlpName): Attributes {
    const names = otlp.attributes;
    // A subgraph series also says where its calls go (server.address, server.port, ...), as a call's span does.
    const attributes: Attributes = labels.subgraph !== undefined && names?.subgraph !== undefined ? { ...this.subgraphs.metric(labels.subgraph, undefined) } : {};
    for (const [label, value] of Object.entries(labels)) attributes[names?.[label] ?? `switchyard.${label}`] = value;
    otlp.adjust?.(attributes);
    return attributes;
  }
}
