import { describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { useTelemetry } from '../../../plugins/telemetry/index.js';
import { otlpNameOf } from '../../../plugins/telemetry/metric-producer.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { productsSubgraph, reviewsSubgraph, TOP_PRODUCTS, TOP_PRODUCTS_DATA, usersSubgraph } from './fixtures.js';
import { useTelemetrySubgraphs } from './use-subgraphs.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { waitFor } from '../../cli/run-cli.js';
import { captureLogs } from '../../support/capture-logs.js';

let products: TestSubgraph;
let reviews: TestSubgraph;
let users: TestSubgraph;
useTelemetrySubgraphs((started) => ({ products, reviews, users } = started));

describe('telemetry: OTLP metrics', () => {
  it('exports the router metrics under semantic-convention names, also with the Prometheus endpoint off', async () => {
    const receiver = await startOtlpReceiver();
    const router = await startTestRouter({
      subgraphs: [products, reviews, users],
      plugins: [useTelemetry({ service_name: 'metrics-test', metrics: { otlp: { enabled: true, export_interval: '50ms', exporters: [{ endpoint: receiver.endpoint }] } } })],
    });
    try {
      for (let i = 0; i < 3; i++) expect((await router.query(TOP_PRODUCTS)).body).toEqual({ data: TOP_PRODUCTS_DATA });
      const points = await receiver.waitForPoints((all) => {
        const server = all.filter((p) => p.metric === 'http.server.request.duration');
        return server.some((p) => p.value >= 3) && all.filter((p) => p.metric === 'http.client.request.duration').length >= 3;
      });
      const server = points.filter((p) => p.metric === 'http.server.request.duration').at(-1)!;
      expect(server).toMatchObject({ unit: 's', kind: 'histogram', value: 3 });
      // The HTTP conventions' attributes: the method, and the status as an integer.
      expect(server.attributes).toEqual({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
      expect(server.resource['service.name']).toBe('metrics-test');
      expect(server.resource['service.instance.id']).toMatch(/^[0-9a-f-]{36}$/);
      const client = points.filter((p) => p.metric === 'http.client.request.duration');
      for (const subgraph of [products, reviews, users]) {
        const point = client.filter((p) => p.attributes['switchyard.subgraph.name'] === subgraph.name).at(-1);
        expect(point, subgraph.name).toBeDefined();
        expect(point!.value).toBe(3);
        expect(point!.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': Number(new URL(subgraph.url).port), 'http.request.method': 'POST' });
      }
      expect(points.filter((p) => p.metric === 'switchyard.operations').at(-1)).toMatchObject({ kind: 'sum', value: 3, attributes: { 'switchyard.operation.outcome': 'ok' } });
      // Metrics alone: no trace context is sent to subgraphs.
      expect(products.calls.at(-1)!.headers.traceparent).toBeUndefined();
    } finally {
      await router.close();
      await receiver.close();
    }
  });

  it('exports the very values the Prometheus endpoint shows: one set of instruments', async () => {
    const cacheable = { reply: () => ({ headers: { 'cache-control': 'max-age=60' } }) };
    const cached3 = await Promise.all([startSubgraph(productsSubgraph(cacheable)), startSubgraph(reviewsSubgraph(cacheable)), startSubgraph(usersSubgraph(cacheable))]);
    const receiver = await startOtlpReceiver();
    const router = await startTestRouter({
      subgraphs: cached3,
      listen: true,
      config: { metrics: { enabled: true, listen_addr: '127.0.0.1:0' } },
      plugins: [
        useTelemetry({ metrics: { otlp: { enabled: true, export_interval: '50ms', exporters: [{ endpoint: receiver.endpoint }] } } }),
        useCacheTags(),
        useResponseCache({ enabled: true, storage: { provider: 'memory' } }),
      ],
    });
    try {
      // One miss of each subgraph, then hits; and requests of other methods and statuses: their own series.
      for (let i = 0; i < 4; i++) expect((await router.query(TOP_PRODUCTS)).body).toEqual({ data: TOP_PRODUCTS_DATA });
      expect((await router.query({ query: TOP_PRODUCTS, method: 'GET' })).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await router.query('{ topProducts { nope } }')).status).toBe(400);
      const prometheus = await (await fetch(router.router.metricsUrl!)).text();
      /** The value of `series` (`name{a="x",b="y"}`, labels in any order). */
      const sample = (series: string): number => {
        const key = (text: string) => {
          const [, name, labels = ''] = /^([^{ ]+)(?:\{(.*)\})?$/.exec(text)!;
          return `${name}{${labels.split(',').filter(Boolean).sort().join(',')}}`;
        };
        const wanted = key(series);
        const line = prometheus.split('\n').find((l) => !l.startsWith('#') && l.includes(' ') && key(l.slice(0, l.lastIndexOf(' '))) === wanted);
        expect(line, series).toBeDefined();
        return Number(line!.slice(line!.lastIndexOf(' ') + 1));
      };
      const isServer = (p: { metric: string; attributes: Record<string, unknown> }, status: number) =>
        p.metric === 'http.server.request.duration' && p.attributes['http.response.status_code'] === status;
      const points = await receiver.waitForPoints((all) => all.some((p) => isServer(p, 200) && p.value === 4) && all.some((p) => isServer(p, 400) && p.value === 2));
      const latest = (metric: string, attributes: Record<string, unknown> = {}) =>
        points.filter((p) => p.metric === metric && Object.entries(attributes).every(([k, v]) => p.attributes[k] === v)).at(-1);

      // One series per method and status, in both exports (Prometheus labels `method` and `status`).
      for (const [method, status, count] of [
        ['POST', 200, 4],
        ['GET', 200, 1],
        ['POST', 400, 2],
      ] as const) {
        const server = latest('http.server.request.duration', { 'http.request.method': method, 'http.response.status_code': status })!;
        const labels = `method="${method}",status="${status}"`;
        expect(server, labels).toBeDefined();
        expect(server.value).toBe(count);
        expect(server.value).toBe(sample(`switchyard_operation_duration_seconds_count{${labels}}`));
        expect(server.sum).toBe(sample(`switchyard_operation_duration_seconds_sum{${labels}}`));
        // Same buckets: OTLP counts per bucket, Prometheus counts at or below each bound.
        expect(server.bounds!.length).toBeGreaterThan(5);
        let atOrBelow = 0;
        server.bounds!.forEach((bound, i) => {
          atOrBelow += server.counts![i]!;
          expect(atOrBelow, `le ${bound}`).toBe(sample(`switchyard_operation_duration_seconds_bucket{le="${bound}",${labels}}`));
        });
        expect(atOrBelow + server.counts!.at(-1)!).toBe(server.value);
        expect(server.attributes).not.toHaveProperty('error.type');
      }
      const productCalls = latest('http.client.request.duration', { 'switchyard.subgraph.name': 'products' })!;
      expect(productCalls.value).toBe(1);
      expect(productCalls.value).toBe(sample('switchyard_subgraph_fetch_duration_seconds_count{subgraph="products"}'));
      expect(productCalls.sum).toBe(sample('switchyard_subgraph_fetch_duration_seconds_sum{subgraph="products"}'));
      const hits = latest('switchyard.response_cache.hits', { 'switchyard.subgraph.name': 'products', 'graphql.type.name': 'Query' })!;
      // The three POSTs after the first and the GET.
      expect(hits).toMatchObject({ kind: 'sum', unit: '{entry}', value: 4 });
      expect(hits.value).toBe(sample('switchyard_response_cache_hits_total{subgraph="products",type="Query"}'));
      expect(latest('switchyard.response_cache.misses', { 'switchyard.subgraph.name': 'products' })?.value).toBe(1);
    } finally {
      await router.close();
      await receiver.close();
      await Promise.all(cached3.map((s) => s.close()));
    }
  });
});

describe('telemetry: request duration attributes', () => {
  it('give the status as an integer, and a 5xx answer an error.type', () => {
    const { adjust } = otlpNameOf('switchyard_operation_duration_seconds');
    const ok: Record<string, string | number> = { 'http.request.method': 'POST', 'http.response.status_code': '200' };
    adjust!(ok);
    expect(ok).toEqual({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
    const failed: Record<string, string | number> = { 'http.request.method': 'GET', 'http.response.status_code': '503' };
    adjust!(failed);
    expect(failed).toEqual({ 'http.request.method': 'GET', 'http.response.status_code': 503, 'error.type': '503' });
  });
});

describe('telemetry: an exporter that is down or hangs', () => {
  async function timedQueries(router: Awaited<ReturnType<typeof startTestRouter>>, count: number): Promise<number> {
    let slowest = 0;
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const response = await router.query(TOP_PRODUCTS);
      slowest = Math.max(slowest, performance.now() - started);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: TOP_PRODUCTS_DATA });
    }
    return slowest;
  }

  it('answers normally and quickly when nothing listens at the collector address', async () => {
    const gone = await startOtlpReceiver();
    const endpoint = gone.endpoint;
    await gone.close();
    const router = await startTestRouter({
      subgraphs: [products, reviews, users],
      plugins: [
        useTelemetry({
          tracing: { enabled: true, exporters: [{ endpoint, batch_timeout: '5ms', export_timeout: '200ms' }] },
          metrics: { otlp: { enabled: true, export_interval: '20ms', exporters: [{ endpoint, export_timeout: '20ms' }] } },
        }),
      ],
    });
    let closedIn = 0;
    try {
      const slowest = await timedQueries(router, 40);
      expect(slowest).toBeLessThan(500);
    } finally {
      const started = performance.now();
      await router.close();
      closedIn = performance.now() - started;
    }
    expect(closedIn).toBeLessThan(3000);
  });

  it('answers normally and quickly when the collector accepts connections and never answers', async () => {
    const hanging = await startOtlpReceiver('hang');
    const router = await startTestRouter({
      subgraphs: [products, reviews, users],
      plugins: [
        useTelemetry({
          tracing: { enabled: true, max_queue_size: 64, max_export_batch_size: 8, exporters: [{ endpoint: hanging.endpoint, batch_timeout: '1ms', export_timeout: '300ms' }] },
          metrics: { otlp: { enabled: true, export_interval: '30ms', exporters: [{ endpoint: hanging.endpoint, export_timeout: '30ms' }] } },
        }),
      ],
    });
    let closedIn = 0;
    try {
      const slowest = await timedQueries(router, 60);
      expect(slowest).toBeLessThan(500);
      // Exports were attempted (and are hanging).
      expect(hanging.requests.length).toBeGreaterThan(0);
      // Concurrent load while exports hang.
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 50 }, () => router.query(TOP_PRODUCTS)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      const started = performance.now();
      await router.close();
      closedIn = performance.now() - started;
      await hanging.close();
    }
    expect(closedIn).toBeLessThan(6000);
  });

  it('answers normally when the collector refuses every export', async () => {
    const failing: OtlpReceiver = await startOtlpReceiver('fail');
    const router = await startTestRouter({
      subgraphs: [products, reviews, users],
      plugins: [useTelemetry({ tracing: { enabled: true, exporters: [{ endpoint: failing.endpoint, batch_timeout: '5ms', export_timeout: '200ms' }] } })],
    });
    try {
      const slowest = await timedQueries(router, 20);
      expect(slowest).toBeLessThan(500);
    } finally {
      await router.close();
      await failing.close();
    }
  });

  it('sends the user and password written in an exporter endpoint as Basic authorization, and logs the endpoint without them', async () => {
    const failing: OtlpReceiver = await startOtlpReceiver('fail');
    const withCredentials = failing.endpoint.replace('http://', 'http://otel-user:s3cret-pw@');
    const { logger, lines } = captureLogs('info');
    const router = await startTestRouter({
      subgraphs: [products, reviews, users],
      logger,
      plugins: [
        useTelemetry({
          tracing: { enabled: true, exporters: [{ endpoint: withCredentials, batch_timeout: '5ms', export_timeout: '200ms' }] },
          metrics: { otlp: { enabled: true, export_interval: '20ms', exporters: [{ endpoint: withCredentials, export_timeout: '200ms' }] } },
        }),
      ],
    });
    const failures = () => lines.filter((line) => line.msg === 'Telemetry export failed; data dropped');
    try {
      await router.query(TOP_PRODUCTS);
      await waitFor(async () => new Set(failures().map((line) => line.signal)).size === 2, 10_000);
    } finally {
      await router.close();
      await failing.close();
    }
    const enabled = lines.find((line) => line.msg === 'Telemetry enabled');
    expect(enabled).toMatchObject({ trace_exporters: [`${failing.endpoint}/v1/traces`], metric_exporters: [`${failing.endpoint}/v1/metrics`] });
    expect(
      failures()
        .map((line) => line.endpoint)
        .sort(),
    ).toEqual([`${failing.endpoint}/v1/metrics`, `${failing.endpoint}/v1/traces`]);
    expect(JSON.stringify(lines)).not.toContain('s3cret-pw');
    expect(failing.lastHeaders.authorization).toBe(`Basic ${Buffer.from('otel-user:s3cret-pw').toString('base64')}`);
  });
});
