import cluster, { type Worker } from 'node:cluster';

/**
 * The primary's side of the metrics under `--workers`: on each scrape it asks
 * every worker for its metrics over IPC (prom-client's request, which every
 * worker answers: metrics.ts registers the worker side) and sums them with
 * prom-client's `AggregatorRegistry.aggregate`, with two differences from
 * prom-client's own `clusterMetrics()`:
 *
 * - Bounded: a scrape waits at most `timeoutMs` for the answers, then
 *   answers with what it has. A worker that is stopped, busy or gone costs a
 *   scrape that time, never a failure; `switchyard_workers_reporting` says
 *   how many workers answered.
 * - Monotonic: counters and histograms (buckets, sums, counts) never go down.
 *   The primary keeps each worker's last answer; a worker that does not answer
 *   a scrape is counted with its last values, and when a worker exits its last
 *   values are folded into a carried offset that is added to every scrape
 *   from then on (its replacement starts again from zero). Gauges are not
 *   carried: a worker that did not answer, or is gone, has no gauge values.
 */

const GET_METRICS_REQ = 'prom-client:getMetricsReq';
const GET_METRICS_RES = 'prom-client:getMetricsRes';

/** The scrape bound when none is given: well under Prometheus' default scrape timeout (10 s). */
export const DEFAULT_CLUSTER_SCRAPE_TIMEOUT_MS = 1500;

/** One metric as a worker's `registry.getMetricsAsJSON()` gives it. */
interface MetricJson {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly aggregator?: string;
  readonly values: ReadonlyArray<{ readonly labels: Readonly<Record<string, string | number>>; readonly value: number; readonly metricName?: string }>;
}

interface MetricsResponse {
  readonly type: typeof GET_METRICS_RES;
  readonly requestId: unknown;
  readonly metrics?: unknown;
  readonly error?: unknown;
}

function isMetricsResponse(message: unknown): message is MetricsResponse {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === GET_METRICS_RES;
}

/** Metrics whose values only grow and add up across processes: these are carried over a worker's death. */
function isCumulative(metric: MetricJson): boolean {
  return (metric.type === 'counter' || metric.type === 'histogram') && (metric.aggregator === undefined || metric.aggregator === 'sum');
}

/** A series' identity: its name (`_bucket`, `_sum`, `_count` for histograms) and labels. */
function seriesKey(name: string, labels: Readonly<Record<string, string | number>>): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((key) => [key, String(labels[key])]);
  return `${name}\u0000${JSON.stringify(sorted)}`;
}

/** What dead workers had counted: per metric, per series, the sum of their last values. */
class Carried {
  private readonly metrics = new Map<
    string,
    { meta: Omit<MetricJson, 'values'>; series: Map<string, { labels: Record<string, string | number>; value: number; metricName?: string }> }
  >();

  add(worker: readonly MetricJson[]): void {
    for (const metric of worker) {
      if (!isCumulative(metric)) continue;
      let entry = this.metrics.get(metric.name);
      if (!entry) {
        entry = { meta: { name: metric.name, help: metric.help, type: metric.type, aggregator: 'sum' }, series: new Map() };
        this.metrics.set(metric.name, entry);
      }
      for (const { labels, value, metricName } of metric.values) {
        const key = seriesKey(metricName ?? metric.name, labels);
        const series = entry.series.get(key);
        if (series) series.value += value;
        else entry.series.set(key, { labels: { ...labels }, value, ...(metricName ? { metricName } : {}) });
      }
    }
  }

  json(): MetricJson[] {
    return [...this.metrics.values()].map(({ meta, series }) => ({ ...meta, values: [...series.values()].map((s) => ({ ...s })) }));
  }
}

interface PendingScrape {
  readonly waiting: Set<number>;
  readonly answered: Set<number>;
  finish(): void;
}

export interface ClusterScraper {
  /** The exposition text of every worker's metrics, summed; never rejects because of a worker. */
  render(): Promise<string>;
}

/**
 * Starts listening to the workers (call once, in the primary). `prom` is the
 * loaded prom-client module.
 */
export function createClusterScraper(prom: typeof import('prom-client'), timeoutMs = DEFAULT_CLUSTER_SCRAPE_TIMEOUT_MS): ClusterScraper {
  /** Each live worker's last answer, and the request it answered (answers are taken only when newer). */
  const last = new Map<number, { requestId: number; metrics: MetricJson[] }>();
  const exited = new Set<number>();
  const carried = new Carried();
  const pending = new Map<number, PendingScrape>();
  let nextRequestId = 1;

  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMetricsResponse(message) || typeof message.requestId !== 'number') return;
    const id = worker.id;
    const scrape = pending.get(message.requestId);
    if (!exited.has(id) && message.error === undefined && Array.isArray(message.metrics)) {
      const previous = last.get(id);
      if (!previous || previous.requestId < message.requestId) {
        // One entry per registry the worker aggregates (metrics.ts: one).
        last.set(id, { requestId: message.requestId, metrics: (message.metrics as MetricJson[][]).flat() });
      }
      scrape?.answered.add(id);
    }
    if (scrape) {
      scrape.waiting.delete(id);
      if (scrape.waiting.size === 0) scrape.finish();
    }
  });

  cluster.on('exit', (worker: Worker) => {
    const id = worker.id;
    exited.add(id);
    const final = last.get(id);
    if (final) carried.add(final.metrics);
    last.delete(id);
    for (const scrape of pending.values()) {
      scrape.answered.delete(id);
      if (scrape.waiting.delete(id) && scrape.waiting.size === 0) scrape.finish();
    }
  });

  const gather = (): Promise<Set<number>> =>
    new Promise((resolve) => {
      const requestId = nextRequestId++;
      let timer: NodeJS.Timeout | undefined;
      const scrape: PendingScrape = {
        waiting: new Set(),
        answered: new Set(),
        finish: () => {
          if (!pending.delete(requestId)) return;
          clearTimeout(timer);
          resolve(scrape.answered);
        },
      };
      pending.set(requestId, scrape);
      for (const worker of Object.values(cluster.workers ?? {})) {
        if (!worker || exited.has(worker.id) || !worker.isConnected()) continue;
        scrape.waiting.add(worker.id);
        // The channel may close between the check and the send: then that worker is not waited for.
        worker.send({ type: GET_METRICS_REQ, requestId }, (error: Error | null) => {
          if (error && scrape.waiting.delete(worker.id) && scrape.waiting.size === 0) scrape.finish();
        });
      }
      if (scrape.waiting.size === 0) scrape.finish();
      else timer = setTimeout(() => scrape.finish(), timeoutMs);
    });

  return {
    async render() {
      const answered = await gather();
      const parts: MetricJson[][] = [];
      let reporting = 0;
      for (const [id, { metrics }] of last) {
        if (answered.has(id)) {
          reporting++;
          parts.push(metrics);
        } else {
          // Not answering (stopped, busy, exiting): its counters as last seen, so the sums do not drop.
          parts.push(metrics.filter(isCumulative));
        }
      }
      parts.push(carried.json());
      const registry = prom.AggregatorRegistry.aggregate(parts);
      const gauge = new prom.Gauge({
        name: 'switchyard_workers_reporting',
        help: 'Workers that answered this scrape of the primary in time (the others are counted with their last values)',
        registers: [registry],
      });
      gauge.set(reporting);
      return registry.metrics();
    },
  };
}
