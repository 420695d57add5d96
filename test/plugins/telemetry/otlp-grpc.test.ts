/**
 * OTLP over gRPC (`exporter: grpc`, or `OTEL_EXPORTER_OTLP_PROTOCOL=grpc` for
 * the default exporter): spans and metrics reach a real gRPC receiver on
 * loopback (otlp-grpc-receiver.ts, @grpc/grpc-js) with their headers as
 * metadata, credentials in the endpoint go as Basic authorization and never
 * into logs, and a receiver that is down or hangs changes nothing for
 * clients.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTelemetry, type TelemetryOptions } from '../../../plugins/telemetry/index.js';
import { exportTargets } from '../../../plugins/telemetry/otel-env.js';
import { telemetryOptionsSchema, type ResolvedTelemetryOptions } from '../../../plugins/telemetry/options.js';
import { builtinSections } from '../../../src/cli/builtin-plugins.js';
import { parseConfig } from '../../../src/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { waitFor } from '../../cli/run-cli.js';
import { captureLogs } from '../../support/capture-logs.js';
import { TOP_PRODUCTS, TOP_PRODUCTS_DATA } from './fixtures.js';
import { METRICS_EXPORT, startOtlpGrpcReceiver, TRACE_EXPORT } from './otlp-grpc-receiver.js';
import { startOtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { useTelemetrySubgraphs } from './use-subgraphs.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const FAILED = 'Telemetry export failed; data dropped';

let products: TestSubgraph;
let reviews: TestSubgraph;
let users: TestSubgraph;
useTelemetrySubgraphs((started) => ({ products, reviews, users } = started));

afterEach(() => {
  vi.unstubAllEnvs();
});

function startRouter(options: TelemetryOptions, logger?: ReturnType<typeof captureLogs>['logger']): Promise<TestRouter> {
  return startTestRouter({ subgraphs: [products, reviews, users], plugins: [useTelemetry(options)], ...(logger ? { logger } : {}) });
}

function byName(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `one span named ${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

const traceIdOf = (): string => crypto.randomUUID().replaceAll('-', '');

describe('telemetry over OTLP/gRPC', () => {
  it("exports an operation's span tree, sending the configured headers as metadata", async () => {
    const receiver = await startOtlpGrpcReceiver();
    const { logger, lines } = captureLogs('info');
    const router = await startRouter(
      {
        service_name: 'grpc-router',
        tracing: {
          enabled: true,
          // `path` does not apply to gRPC: ignored with a warning, as Cosmo does.
          exporters: [{ exporter: 'grpc', endpoint: receiver.endpoint, path: '/v1/traces', batch_timeout: '20ms', headers: { 'X-Api-Key': 'key-1' } }],
        },
      },
      logger,
    );
    const traceId = traceIdOf();
    const parentId = 'a1b2c3d4e5f60718';
    try {
      const response = await router.query({ query: TOP_PRODUCTS, headers: { traceparent: `00-${traceId}-${parentId}-01` } });
      expect(response.body).toEqual({ data: TOP_PRODUCTS_DATA });
      const spans = (await receiver.waitForSpans((all) => all.filter((s) => s.traceId === traceId).length >= 8)).filter((s) => s.traceId === traceId);
      expect(spans.map((s) => s.name).sort()).toEqual(['execute', 'fetch products', 'fetch reviews', 'fetch users', 'parse', 'plan', 'query TopProducts', 'validate'].sort());
      const server = byName(spans, 'query TopProducts');
      expect(server).toMatchObject({ kind: SERVER, parentSpanId: parentId, scope: 'switchyard' });
      expect(server.resource['service.name']).toBe('grpc-router');
      for (const name of ['parse', 'validate', 'plan', 'execute']) expect(byName(spans, name)).toMatchObject({ kind: INTERNAL, parentSpanId: server.spanId });
      const execute = byName(spans, 'execute');
      for (const subgraph of [products, reviews, users]) {
        const fetch = byName(spans, `fetch ${subgraph.name}`);
        expect(fetch).toMatchObject({ kind: CLIENT, parentSpanId: execute.spanId });
        expect(subgraph.calls.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${fetch.spanId}-01`);
      }
      expect(new Set(receiver.requests)).toEqual(new Set([TRACE_EXPORT]));
      expect(receiver.lastMetadata['x-api-key']).toBe('key-1');
      expect(receiver.lastMetadata['user-agent']).toMatch(/OTel-OTLP-Exporter-JavaScript/);
    } finally {
      await router.close();
      await receiver.close();
    }
    expect(lines.find((line) => line.msg === 'Telemetry enabled')).toMatchObject({ trace_exporters: [receiver.endpoint], trace_protocols: ['grpc'] });
    expect(lines.filter((line) => String(line.msg).startsWith('Telemetry exporter path ignored'))).toEqual([
      expect.objectContaining({ level: 'warn', signal: 'traces', endpoint: receiver.endpoint, path: '/v1/traces' }),
    ]);
  });

  it('exports the router metrics over gRPC', async () => {
    const receiver = await startOtlpGrpcReceiver();
    const router = await startRouter({
      service_name: 'grpc-metrics',
      metrics: { otlp: { enabled: true, export_interval: '50ms', exporters: [{ exporter: 'grpc', endpoint: receiver.endpoint, headers: { tenant: 't1' } }] } },
    });
    try {
      for (let i = 0; i < 3; i++) expect((await router.query(TOP_PRODUCTS)).body).toEqual({ data: TOP_PRODUCTS_DATA });
      const points = await receiver.waitForPoints((all) => all.some((p) => p.metric === 'http.server.request.duration' && p.value >= 3));
      const server = points.filter((p) => p.metric === 'http.server.request.duration').at(-1)!;
      expect(server).toMatchObject({ unit: 's', kind: 'histogram', value: 3, attributes: { 'http.request.method': 'POST', 'http.response.status_code': 200 } });
      expect(server.resource['service.name']).toBe('grpc-metrics');
      expect(points.filter((p) => p.metric === 'switchyard.operations').at(-1)).toMatchObject({ kind: 'sum', value: 3 });
      expect(new Set(receiver.requests)).toEqual(new Set([METRICS_EXPORT]));
      expect(receiver.lastMetadata.tenant).toBe('t1');
    } finally {
      await router.close();
      await receiver.close();
    }
  });

  it('sends user:password@ of a gRPC endpoint as Basic authorization metadata, logging the endpoint without it, once per 30 s', async () => {
    const failing = await startOtlpGrpcReceiver('fail');
    const withCredentials = failing.endpoint.replace('http://', 'http://otel-user:s3cret-pw@');
    const { logger, lines } = captureLogs('info');
    const router = await startRouter(
      {
        tracing: { enabled: true, exporters: [{ exporter: 'grpc', endpoint: withCredentials, batch_timeout: '5ms', export_timeout: '200ms' }] },
        metrics: { otlp: { enabled: true, export_interval: '20ms', exporters: [{ exporter: 'grpc', endpoint: withCredentials, export_timeout: '200ms' }] } },
      },
      logger,
    );
    const failures = () => lines.filter((line) => line.msg === FAILED);
    try {
      for (let i = 0; i < 5; i++) await router.query(TOP_PRODUCTS);
      await waitFor(async () => new Set(failures().map((line) => line.signal)).size === 2, 10_000);
      // Several exports of each signal failed by now; each signal's failures were logged once.
      await waitFor(async () => failing.requests.filter((path) => path === METRICS_EXPORT).length >= 3 && failing.requests.includes(TRACE_EXPORT), 10_000);
    } finally {
      await router.close();
      await failing.close();
    }
    expect(failures()).toHaveLength(2);
    expect(
      failures()
        .map((line) => [line.signal, line.protocol, line.endpoint])
        .sort(),
    ).toEqual([
      ['metrics', 'grpc', failing.endpoint],
      ['traces', 'grpc', failing.endpoint],
    ]);
    expect(lines.find((line) => line.msg === 'Telemetry enabled')).toMatchObject({ trace_exporters: [failing.endpoint], metric_exporters: [failing.endpoint] });
    expect(JSON.stringify(lines)).not.toContain('s3cret-pw');
    expect(failing.lastMetadata.authorization).toBe(`Basic ${Buffer.from('otel-user:s3cret-pw').toString('base64')}`);
  });

  it('a configured Authorization header wins over user:password@', async () => {
    const receiver = await startOtlpGrpcReceiver();
    const router = await startRouter({
      tracing: {
        enabled: true,
        exporters: [{ exporter: 'grpc', endpoint: receiver.endpoint.replace('http://', 'http://u:p@'), batch_timeout: '5ms', headers: { Authorization: 'Bearer token-1' } }],
      },
    });
    try {
      await router.query(TOP_PRODUCTS);
      await receiver.waitForSpans((all) => all.length > 0);
      expect(receiver.lastMetadata.authorization).toBe('Bearer token-1');
    } finally {
      await router.close();
      await receiver.close();
    }
  });
});

/** A router whose default exporters (traces and metrics) follow OTEL_EXPORTER_OTLP_PROTOCOL and OTEL_EXPORTER_OTLP_ENDPOINT. */
async function startWithProtocol(protocol: string, endpoint: string): Promise<{ router: TestRouter; lines: ReturnType<typeof captureLogs>['lines'] }> {
  vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', protocol);
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint);
  const { logger, lines } = captureLogs('info');
  const router = await startRouter(
    // A full batch goes at once: the default exporter waits 5 s otherwise.
    { tracing: { enabled: true, exporters: [], max_export_batch_size: 1 }, metrics: { otlp: { enabled: true, export_interval: '30ms' } } },
    logger,
  );
  vi.unstubAllEnvs();
  return { router, lines };
}

describe('telemetry: OTEL_EXPORTER_OTLP_PROTOCOL', () => {
  it('grpc with OTEL_EXPORTER_OTLP_ENDPOINT sends both signals of the default exporter over gRPC, the endpoint used as it is', async () => {
    const receiver = await startOtlpGrpcReceiver();
    const http = await startOtlpReceiver();
    const { router, lines } = await startWithProtocol('grpc', receiver.endpoint);
    try {
      await router.query(TOP_PRODUCTS);
      await receiver.waitForSpans((all) => all.some((s) => s.name === 'query TopProducts'), 10_000);
      await receiver.waitForPoints((all) => all.some((p) => p.metric === 'http.server.request.duration'));
      expect(lines.find((line) => line.msg === 'Telemetry enabled')).toMatchObject({
        trace_exporters: [receiver.endpoint],
        metric_exporters: [receiver.endpoint],
        trace_protocols: ['grpc'],
        metric_protocols: ['grpc'],
      });
      expect(http.requests).toEqual([]);
    } finally {
      await router.close();
      await receiver.close();
      await http.close();
    }
  });

  it('resolves the default exporter from the protocol and endpoint variables as the specification says', () => {
    const targets = (signal: 'traces' | 'metrics', env: NodeJS.ProcessEnv) => exportTargets(signal, [], env).map((t) => [t.protocol, t.url]);
    expect(targets('traces', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual([['grpc', 'http://localhost:4317']]);
    expect(targets('traces', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel:4317/' })).toEqual([['grpc', 'https://otel:4317']]);
    expect(
      targets('metrics', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4317', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:9999' }),
    ).toEqual([['grpc', 'http://m:9999']]);
    // The signal's variable wins over the general one.
    expect(
      targets('traces', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' }),
    ).toEqual([['http', 'http://otel:4318/v1/traces']]);
    expect(targets('metrics', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' })).toEqual([['grpc', 'http://localhost:4317']]);
    expect(targets('traces', {})).toEqual([['http', 'http://localhost:4318/v1/traces']]);
    // Configured exporters keep their own protocol whatever the variable says.
    const configured = telemetryOptionsSchema.parse({ tracing: { exporters: [{ endpoint: 'http://mine:4318' }, { exporter: 'grpc', endpoint: 'http://mine:4317/ignored' }] } });
    expect(exportTargets('traces', configured.tracing.exporters, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).map((t) => [t.protocol, t.url, t.ignoredPath])).toEqual([
      ['http', 'http://mine:4318/v1/traces', undefined],
      ['grpc', 'http://mine:4317', '/ignored'],
    ]);
  });

  it('http/json sends both signals of the default exporter as OTLP/JSON to the OTLP/HTTP endpoint', async () => {
    const receiver = await startOtlpReceiver();
    const { router, lines } = await startWithProtocol('http/json', receiver.endpoint);
    const traceId = traceIdOf();
    try {
      expect((await router.query({ query: TOP_PRODUCTS, headers: { traceparent: `00-${traceId}-a1b2c3d4e5f60718-01` } })).body).toEqual({ data: TOP_PRODUCTS_DATA });
      // The ids arrive in hex, as OTLP/JSON writes them: the tree links up and matches what the subgraphs were sent.
      const spans = (await receiver.waitForSpans((all) => all.filter((s) => s.traceId === traceId).length >= 8, 10_000)).filter((s) => s.traceId === traceId);
      const server = byName(spans, 'query TopProducts');
      expect(server).toMatchObject({ kind: SERVER, parentSpanId: 'a1b2c3d4e5f60718', scope: 'switchyard' });
      expect(server.attributes['http.response.status_code']).toBe(200);
      const execute = byName(spans, 'execute');
      expect(execute.parentSpanId).toBe(server.spanId);
      for (const subgraph of [products, reviews, users]) {
        const fetch = byName(spans, `fetch ${subgraph.name}`);
        expect(fetch).toMatchObject({ kind: CLIENT, parentSpanId: execute.spanId });
        expect(subgraph.calls.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${fetch.spanId}-01`);
      }
      const points = await receiver.waitForPoints((all) => all.some((p) => p.metric === 'http.server.request.duration' && p.value >= 1));
      expect(points.find((p) => p.metric === 'http.server.request.duration')!.resource['service.name']).toBe('switchyard');
      expect(receiver.encodings).toMatchObject({ protobuf: 0 });
      expect(receiver.encodings.json).toBeGreaterThanOrEqual(2);
      expect(receiver.lastHeaders['content-type']).toBe('application/json');
      expect(new Set(receiver.requests)).toEqual(new Set(['/v1/traces', '/v1/metrics']));
      expect(lines.find((line) => line.msg === 'Telemetry enabled')).toMatchObject({
        trace_exporters: [`${receiver.endpoint}/v1/traces`],
        trace_protocols: ['http/json'],
        metric_protocols: ['http/json'],
      });
      expect(lines.filter((line) => line.level === 'warn')).toEqual([]);
    } finally {
      await router.close();
      await receiver.close();
    }
  });

  it('falls back to OTLP/HTTP with protobuf for an unknown protocol, with a warning naming the variable', async () => {
    expect(exportTargets('traces', [], { OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' }).map((t) => [t.protocol, t.url, t.unsupportedProtocol])).toEqual([
      ['http/json', 'http://localhost:4318/v1/traces', undefined],
    ]);
    expect(exportTargets('metrics', [], { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'udp' }).map((t) => [t.protocol, t.unsupportedProtocol])).toEqual([
      ['http', { variable: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', value: 'udp' }],
    ]);
    const receiver = await startOtlpReceiver();
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'http/xml');
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.endpoint);
    const { logger, lines } = captureLogs('info');
    const router = await startRouter({ tracing: { enabled: true, exporters: [], max_export_batch_size: 1 } }, logger);
    vi.unstubAllEnvs();
    try {
      expect((await router.query({ query: TOP_PRODUCTS })).body).toEqual({ data: TOP_PRODUCTS_DATA });
      const warning = lines.find((line) => String(line.msg).startsWith('Telemetry protocol not supported'));
      expect(warning).toMatchObject({ level: 'warn', signal: 'traces', variable: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', value: 'http/xml' });
      await receiver.waitForSpans((all) => all.some((s) => s.name === 'query TopProducts'), 10_000);
      expect(receiver.encodings).toMatchObject({ json: 0 });
    } finally {
      await router.close();
      await receiver.close();
    }
  });
});

describe('telemetry: gRPC exporter configuration', () => {
  const sections = builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));
  const parse = (telemetry: unknown) => parseConfig({ version: '1', telemetry }, { env: {}, sections });

  it('accepts exporter: grpc for traces and metrics, without a default path', () => {
    const config = parse({
      tracing: { enabled: true, exporters: [{ exporter: 'grpc', endpoint: 'https://collector:4317', headers: { 'x-api-key': 'k' } }] },
      metrics: { otlp: { enabled: true, exporters: [{ exporter: 'grpc' }, { exporter: 'http' }] } },
    });
    const telemetry = config.sections.telemetry as ResolvedTelemetryOptions;
    expect(telemetry).toMatchObject({
      tracing: { exporters: [{ exporter: 'grpc', endpoint: 'https://collector:4317', export_timeout: 10_000, batch_timeout: 5_000 }] },
      metrics: { otlp: { exporters: [{ exporter: 'grpc' }, { exporter: 'http', path: '/v1/metrics' }] } },
    });
    expect(telemetry.tracing.exporters[0]!.path).toBeUndefined();
    expect(telemetry.metrics.otlp.exporters[0]!.path).toBeUndefined();
  });

  it('refuses an unknown exporter and headers gRPC cannot send, naming the key', () => {
    expect(() => parse({ tracing: { exporters: [{ exporter: 'jaeger' }] } })).toThrow(/telemetry\.tracing\.exporters\[0\]\.exporter.*"http".*"grpc"/);
    expect(() => parse({ metrics: { otlp: { exporters: [{ exporter: 'zipkin' }] } } })).toThrow(/telemetry\.metrics\.otlp\.exporters\[0\]\.exporter/);
    expect(() => parse({ tracing: { exporters: [{ exporter: 'grpc', headers: { 'x-trace-bin': 'AAAA' } }] } })).toThrow(
      /telemetry\.tracing\.exporters\[0\]\.headers\.x-trace-bin: must be a gRPC metadata key/,
    );
    expect(() => parse({ tracing: { exporters: [{ exporter: 'grpc', headers: { 'x-key': 'caf\u00e9' } }] } })).toThrow(/headers\.x-key: must be printable ASCII/);
    // The same header is fine over HTTP.
    expect(() => parse({ tracing: { exporters: [{ exporter: 'http', headers: { 'x-trace-bin': 'AAAA' } }] } })).not.toThrow();
    expect(() => useTelemetry({ tracing: { enabled: true, exporters: [{ exporter: 'grpc', endpoint: 'collector:4317' }] } })).toThrow(
      /\[telemetry\] telemetry\.tracing\.exporters\[0\]\.endpoint/,
    );
  });
});

describe('telemetry: a gRPC collector that is down or hangs', () => {
  async function timedQueries(router: TestRouter, count: number): Promise<number> {
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

  it('answers normally and quickly when nothing listens at the collector address, logging once per signal', async () => {
    const gone = await startOtlpGrpcReceiver();
    const endpoint = gone.endpoint.replace('http://', 'http://user:pw-down@');
    await gone.close();
    const { logger, lines } = captureLogs('info');
    const router = await startRouter(
      {
        tracing: { enabled: true, exporters: [{ exporter: 'grpc', endpoint, batch_timeout: '5ms', export_timeout: '200ms' }] },
        metrics: { otlp: { enabled: true, export_interval: '20ms', exporters: [{ exporter: 'grpc', endpoint, export_timeout: '20ms' }] } },
      },
      logger,
    );
    let closedIn = 0;
    try {
      const slowest = await timedQueries(router, 40);
      expect(slowest).toBeLessThan(500);
      await waitFor(async () => new Set(lines.filter((line) => line.msg === FAILED).map((line) => line.signal)).size === 2, 10_000);
    } finally {
      const started = performance.now();
      await router.close();
      closedIn = performance.now() - started;
    }
    expect(closedIn).toBeLessThan(3000);
    const failures = lines.filter((line) => line.msg === FAILED);
    expect(failures).toHaveLength(2);
    for (const failure of failures) expect(failure).toMatchObject({ level: 'warn', protocol: 'grpc', endpoint: gone.endpoint });
    expect(JSON.stringify(lines)).not.toContain('pw-down');
  });

  it('answers normally and quickly when the collector accepts calls and never answers them', async () => {
    const hanging = await startOtlpGrpcReceiver('hang');
    const { logger, lines } = captureLogs('info');
    const router = await startRouter(
      {
        tracing: {
          enabled: true,
          max_queue_size: 64,
          max_export_batch_size: 8,
          exporters: [{ exporter: 'grpc', endpoint: hanging.endpoint, batch_timeout: '1ms', export_timeout: '300ms' }],
        },
        metrics: { otlp: { enabled: true, export_interval: '30ms', exporters: [{ exporter: 'grpc', endpoint: hanging.endpoint, export_timeout: '30ms' }] } },
      },
      logger,
    );
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
      await waitFor(async () => new Set(lines.filter((line) => line.msg === FAILED).map((line) => line.signal)).size === 2, 10_000);
    } finally {
      const started = performance.now();
      await router.close();
      closedIn = performance.now() - started;
      await hanging.close();
    }
    expect(closedIn).toBeLessThan(6000);
    expect(lines.filter((line) => line.msg === FAILED)).toHaveLength(2);
  });
});
