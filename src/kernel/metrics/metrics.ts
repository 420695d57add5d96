import cluster from 'node:cluster';
import type { Registry } from 'prom-client';
import { createClusterScraper } from './cluster-metrics.js';

/** Label values by label name. */
export type Labels = Readonly<Record<string, string>>;

export interface Counter {
  inc(labels?: Labels, value?: number): void;
}

export interface Histogram {
  /** Records one value (seconds for durations). */
  observe(labels: Labels, value: number): void;
}

export interface Gauge {
  /** Sets the current value. */
  set(labels: Labels, value: number): void;
}

/** How a gauge's per-worker values combine under `--workers` (prom-client's aggregators). */
export type GaugeAggregation = 'sum' | 'max' | 'min' | 'average';

/** One labelled series of a counter or gauge, as read at collection time. */
export interface ValueSeries {
  readonly labels: Labels;
  readonly value: number;
}

/** One labelled series of a histogram: per-bucket counts (not cumulative), the last one for values above every bound. */
export interface HistogramSeries {
  readonly labels: Labels;
  /** Upper bounds, ascending, without +Inf. */
  readonly bounds: readonly number[];
  /** `bounds.length + 1` counts. */
  readonly counts: readonly number[];
  readonly count: number;
  readonly sum: number;
}

/**
 * What an instrument holds right now (this process only, cumulative since it
 * started): the one set of values both the Prometheus endpoint and other
 * exporters (the telemetry plugin's OTLP metrics) read.
 */
export type MetricSnapshot =
  | { readonly kind: 'counter' | 'gauge'; readonly name: string; readonly help: string; readonly series: readonly ValueSeries[] }
  | { readonly kind: 'histogram'; readonly name: string; readonly help: string; readonly series: readonly HistogramSeries[] };

/**
 * Prometheus metrics for the kernel and plugins. Metric names get the
 * `switchyard_` prefix. When metrics are off every instrument is a no-op.
 */
export interface Metrics {
  readonly enabled: boolean;
  counter(name: string, help: string, labelNames?: readonly string[]): Counter;
  histogram(name: string, help: string, labelNames?: readonly string[], buckets?: readonly number[]): Histogram;
  /** A value that goes up and down; under `--workers` combined by `aggregation` (default `sum`). */
  gauge(name: string, help: string, labelNames?: readonly string[], aggregation?: GaugeAggregation): Gauge;
  /** The exposition text (`text/plain; version=0.0.4`). */
  render(): Promise<string>;
  /**
   * The values of the instruments made with `counter`, `histogram` and
   * `gauge` (full `switchyard_` names; not the process metrics), read
   * without changing them. Empty when metrics are off.
   */
  collect(): Promise<MetricSnapshot[]>;
}

const NOOP_COUNTER: Counter = { inc() {} };
const NOOP_HISTOGRAM: Histogram = { observe() {} };
const NOOP_GAUGE: Gauge = { set() {} };

/** Metrics that record nothing (metrics disabled). */
export const noopMetrics: Metrics = {
  enabled: false,
  counter: () => NOOP_COUNTER,
  histogram: () => NOOP_HISTOGRAM,
  gauge: () => NOOP_GAUGE,
  render: async () => '',
  collect: async () => [],
};

/** Metrics backed by prom-client, loaded only when metrics are enabled. */
export async function createPrometheusMetrics(): Promise<Metrics> {
  const prom = await import('prom-client');
  const registry: Registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, prefix: 'switchyard_' });
  if (cluster.isWorker) {
    // Under `--workers` the primary serves the metrics of every worker, summed: answer its requests.
    new prom.AggregatorRegistry();
    prom.AggregatorRegistry.setRegistries([registry]);
  }
  const counters = new Map<string, Counter>();
  const histograms = new Map<string, Histogram>();
  const gauges = new Map<string, Gauge>();
  /** The prom-client objects behind those, in creation order: what `collect` reads. */
  const instruments: Array<{ kind: MetricSnapshot['kind']; get(): Promise<PromMetric> }> = [];
  return {
    enabled: true,
    counter(name, help, labelNames = []) {
      const full = `switchyard_${name}`;
      let counter = counters.get(full);
      if (!counter) {
        const instrument = new prom.Counter({ name: full, help, labelNames: [...labelNames], registers: [registry] });
        counter = { inc: (labels = {}, value = 1) => instrument.inc(labels, value) };
        counters.set(full, counter);
        instruments.push({ kind: 'counter', get: () => instrument.get() });
      }
      return counter;
    },
    histogram(name, help, labelNames = [], buckets) {
      const full = `switchyard_${name}`;
      let histogram = histograms.get(full);
      if (!histogram) {
        const instrument = new prom.Histogram({
          name: full,
          help,
          labelNames: [...labelNames],
          registers: [registry],
          ...(buckets ? { buckets: [...buckets] } : {}),
        });
        histogram = { observe: (labels, value) => instrument.observe(labels, value) };
        histograms.set(full, histogram);
        instruments.push({ kind: 'histogram', get: () => instrument.get() });
      }
      return histogram;
    },
    gauge(name, help, labelNames = [], aggregation = 'sum') {
      const full = `switchyard_${name}`;
      let gauge = gauges.get(full);
      if (!gauge) {
        const instrument = new prom.Gauge({ name: full, help, labelNames: [...labelNames], registers: [registry], aggregator: aggregation });
        gauge = { set: (labels, value) => instrument.set(labels, value) };
        gauges.set(full, gauge);
        instruments.push({ kind: 'gauge', get: () => instrument.get() });
      }
      return gauge;
    },
    render: () => registry.metrics(),
    collect: () => Promise.all(instruments.map(async ({ kind, get }) => snapshotOf(kind, await get()))),
  };
}

/** What prom-client's `get()` answers (histograms: one `_bucket` value per bound, cumulative, then `_sum` and `_count`). */
interface PromMetric {
  readonly name: string;
  readonly help: string;
  readonly values: ReadonlyArray<{ readonly labels: Readonly<Record<string, string | number | undefined>>; readonly value: number; readonly metricName?: string }>;
}

function snapshotOf(kind: MetricSnapshot['kind'], metric: PromMetric): MetricSnapshot {
  if (kind !== 'histogram') {
    return { kind, name: metric.name, help: metric.help, series: metric.values.map((v) => ({ labels: stringLabels(v.labels), value: v.value })) };
  }
  // Group the flat values by their labels (without `le`).
  const byLabels = new Map<string, { labels: Labels; cumulative: Array<[number, number]>; count: number; sum: number }>();
  for (const { labels, value, metricName } of metric.values) {
    const { le, ...rest } = labels;
    const own = stringLabels(rest);
    const key = JSON.stringify(own);
    let series = byLabels.get(key);
    if (!series) {
      series = { labels: own, cumulative: [], count: 0, sum: 0 };
      byLabels.set(key, series);
    }
    if (metricName === `${metric.name}_sum`) series.sum = value;
    else if (metricName === `${metric.name}_count`) series.count = value;
    else if (le !== '+Inf' && le !== undefined) series.cumulative.push([Number(le), value]);
  }
  const series: HistogramSeries[] = [];
  for (const { labels, cumulative, count, sum } of byLabels.values()) {
    cumulative.sort((a, b) => a[0] - b[0]);
    const counts: number[] = [];
    let below = 0;
    for (const [, atOrBelow] of cumulative) {
      counts.push(atOrBelow - below);
      below = atOrBelow;
    }
    counts.push(count - below);
    series.push({ labels, bounds: cumulative.map(([bound]) => bound), counts, count, sum });
  }
  return { kind, name: metric.name, help: metric.help, series };
}

function stringLabels(labels: Readonly<Record<string, string | number | undefined>>): Labels {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(labels)) if (value !== undefined) out[name] = String(value);
  return out;
}

/** Options of `createClusterMetrics`. */
export interface ClusterMetricsOptions {
  /** How long a scrape waits for the workers' answers, in ms (default 1500). */
  readonly timeoutMs?: number;
}

/**
 * The primary's view under `--workers`: every worker's metrics, aggregated on
 * each scrape, within `timeoutMs` whatever the workers do, counters never
 * going down when a worker dies (cluster-metrics.ts). Call once, in the primary.
 */
export async function createClusterMetrics(options: ClusterMetricsOptions = {}): Promise<Metrics> {
  const prom = await import('prom-client');
  // Not prom-client's `new AggregatorRegistry().clusterMetrics()`: it fails the scrape after 5 s when a worker does not answer, and its sums drop when a worker dies.
  const scraper = createClusterScraper(prom, options.timeoutMs);
  return { ...noopMetrics, enabled: true, render: () => scraper.render() };
}
