import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTelemetry } from '../../../plugins/telemetry/index.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { productsSubgraph, reviewsSubgraph, TOP_PRODUCTS, TOP_PRODUCTS_DATA, usersSubgraph } from './fixtures.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let products: TestSubgraph;
let reviews: TestSubgraph;
let users: TestSubgraph;

beforeAll(async () => {
  [products, reviews, users] = await Promise.all([startSubgraph(productsSubgraph()), startSubgraph(reviewsSubgraph()), startSubgraph(usersSubgraph())]);
});

afterAll(async () => {
  await Promise.all([products.close(), reviews.close(), users.close()]);
});

describe('telemetry: OTLP metrics', () => {
  it('exports request and subgraph call durations with semantic-convention names', async () => {
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
      expect(server).toMatchObject({
        unit: 's',
        kind: 'histogram',
        attributes: { 'http.request.method': 'POST', 'http.response.status_code': 200, 'graphql.operation.type': 'query' },
      });
      expect(server.resource['service.name']).toBe('metrics-test');
      const client = points.filter((p) => p.metric === 'http.client.request.duration');
      for (const subgraph of [products, reviews, users]) {
        const point = client.filter((p) => p.attributes['switchyard.subgraph.name'] === subgraph.name).at(-1);
        expect(point, subgraph.name).toBeDefined();
        expect(point!.value).toBeGreaterThanOrEqual(3);
        expect(point!.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'http.request.method': 'POST' });
      }
      // Metrics alone: no trace context is sent to subgraphs.
      expect(products.calls.at(-1)!.headers.traceparent).toBeUndefined();
    } finally {
      await router.close();
      await receiver.close();
    }
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
});
