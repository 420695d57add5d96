import cluster from 'node:cluster';
import type { Registry } from 'prom-client';

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
  return {
    enabled: true,
    counter(name, help, labelNames = []) {
      const full = `switchyard_${name}`;
      let counter = counters.get(full);
      if (!counter) {
        const instrument = new prom.Counter({ name: full, help, labelNames: [...labelNames], registers: [registry] });
        counter = { inc: (labels = {}, value = 1) => instrument.inc(labels, value) };
        counters.set(full, counter);
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
      }
      return gauge;
    },
    render: () => registry.metrics(),
  };
}

/** The primary's view under `--workers`: every worker's metrics, aggregated on each scrape. */
export async function createClusterMetrics(): Promise<Metrics> {
  const prom = await import('prom-client');
  const aggregator = new prom.AggregatorRegistry();
  return { ...noopMetrics, enabled: true, render: () => aggregator.clusterMetrics() };
}
