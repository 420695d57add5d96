import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accessLogsSection, telemetrySection } from '../../../plugins/telemetry/config.js';
import { ACCESS_LOG_MESSAGE, useAccessLogs, useTelemetry } from '../../../plugins/telemetry/index.js';
import { exportTargets, resolveServiceName } from '../../../plugins/telemetry/otel-env.js';
import { telemetryOptionsSchema } from '../../../plugins/telemetry/options.js';
import { builtinSections } from '../../../src/cli/builtin-plugins.js';
import { createLogger, parseConfig, sectionPlugins, type LoadedConfig } from '../../../src/index.js';
import { loadRouterSetup } from '../../../src/setup/index.js';
import { startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { TOP_PRODUCTS } from './fixtures.js';
import { captureLogs } from '../../support/capture-logs.js';
import { useTelemetrySubgraphs } from './use-subgraphs.js';

/** The plugins each section switches on, as `switchyard router` builds them. */
const telemetryPlugins = (config: LoadedConfig) => sectionPlugins(telemetrySection, config, {});
const accessLogsPlugins = (config: LoadedConfig) => sectionPlugins(accessLogsSection, config, {});

let products: TestSubgraph;
let reviews: TestSubgraph;
let users: TestSubgraph;
useTelemetrySubgraphs((started) => ({ products, reviews, users } = started));

const capturingLogger = () => captureLogs('info');

describe('access logs', () => {
  it('writes one JSON line per request with the operation, client, status, duration and subgraph calls', async () => {
    const { logger, lines } = capturingLogger();
    const router = await startTestRouter({ subgraphs: [products, reviews, users], plugins: [useAccessLogs({ enabled: true })], logger });
    try {
      await router.query({ query: TOP_PRODUCTS, headers: { 'graphql-client-name': 'ios', 'graphql-client-version': '1.2.3' } });
      await router.query({ query: '{ nope }' });
    } finally {
      await router.close();
    }
    const access = lines.filter((line) => line.msg === ACCESS_LOG_MESSAGE);
    expect(access).toHaveLength(2);
    expect(access[0]).toMatchObject({
      level: 'info',
      plugin: 'access-logs',
      operation_name: 'TopProducts',
      operation_type: 'query',
      operation_hash: createHash('sha256').update(TOP_PRODUCTS).digest('hex'),
      client_name: 'ios',
      client_version: '1.2.3',
      method: 'POST',
      origin: 'http',
      status: 200,
      subgraph_calls: 3,
      cache_hits: 0,
      errors: 0,
    });
    expect(typeof access[0]!.duration_ms).toBe('number');
    expect(access[0]!.duration_ms as number).toBeGreaterThan(0);
    expect(access[1]).toMatchObject({ status: 400, subgraph_calls: 0, errors: 1, error_code: 'GRAPHQL_VALIDATION_FAILED', operation_type: 'query' });
  });

  it('cuts client-supplied values to 256 characters, so a line does not grow with the request', async () => {
    const { logger, lines } = capturingLogger();
    const router = await startTestRouter({ subgraphs: [products, reviews, users], plugins: [useAccessLogs({ enabled: true })], logger });
    const longName = `Op${'x'.repeat(5000)}`;
    try {
      const answer = await router.query({
        query: `query ${longName} { topProducts { name } }`,
        operationName: longName,
        headers: { 'graphql-client-name': 'c'.repeat(1000), 'graphql-client-version': 'v'.repeat(300) },
      });
      expect(answer.status).toBe(200);
    } finally {
      await router.close();
    }
    const line = lines.find((l) => l.msg === ACCESS_LOG_MESSAGE)!;
    expect(line.operation_name).toBe(`${longName.slice(0, 255)}\u2026`);
    expect(line.client_name).toBe(`${'c'.repeat(255)}\u2026`);
    expect(line.client_version).toBe(`${'v'.repeat(255)}\u2026`);
  });

  it('escapes C1 controls and line separators from clients in lines printed for a terminal', async () => {
    let printed = '';
    const logger = createLogger({ level: 'info', pretty: true, destination: { write: (text: string) => void (printed += text) } });
    const router = await startTestRouter({ subgraphs: [products, reviews, users], plugins: [useAccessLogs({ enabled: true })], logger });
    const name = 'Evil\u009b31m\u2028forged\u2029\u0085\u001b[2J';
    try {
      await router.query({ query: '{ topProducts { name } }', operationName: name });
    } finally {
      await router.close();
    }
    expect(printed).toContain('Request completed');
    expect(printed).toContain('Evil\\u009b31m\\u2028forged\\u2029\\u0085\\u001b[2J');
    expect(printed).not.toMatch(/[\u0080-\u009f\u2028\u2029]/);
  });

  it('has no hooks when disabled', async () => {
    const plugin = useAccessLogs({ enabled: false });
    const instance = await plugin.setup({} as never);
    expect(instance).toBeUndefined();
  });
});

describe('telemetry configuration', () => {
  const sections = builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));

  it('reads Cosmo-shaped telemetry sections, next to the Prometheus alias', async () => {
    const config = parseConfig(
      {
        version: '1',
        telemetry: {
          service_name: 'edge',
          tracing: { enabled: true, sampling_rate: 0.25, exporters: [{ exporter: 'http', endpoint: 'http://collector:4318', headers: { 'x-api-key': 'k' } }] },
          metrics: { prometheus: { enabled: true, listen_addr: '127.0.0.1:0' }, otlp: { enabled: true } },
        },
        access_logs: { enabled: true },
      },
      { env: {}, sections },
    );
    expect(config.core.metrics).toMatchObject({ enabled: true, listen_addr: '127.0.0.1:0' });
    expect(config.sections.telemetry).toMatchObject({
      service_name: 'edge',
      tracing: { enabled: true, sampling_rate: 0.25, exporters: [{ endpoint: 'http://collector:4318', path: '/v1/traces', export_timeout: 10_000, batch_timeout: 5_000 }] },
      metrics: { otlp: { enabled: true, exporters: [], export_interval: 15_000 } },
    });
    expect((await telemetryPlugins(config)).map((p) => p.name)).toEqual(['telemetry']);
    expect((await accessLogsPlugins(config)).map((p) => p.name)).toEqual(['access-logs']);
  });

  it('puts telemetry and access logs first in the plugin list the config file builds', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'switchyard-telemetry-'));
    try {
      const configPath = join(folder, 'router.config.yaml');
      await writeFile(
        configPath,
        [
          'version: "1"',
          'telemetry:',
          '  tracing:',
          '    enabled: true',
          'access_logs:',
          '  enabled: true',
          'response_cache:',
          '  enabled: true',
          '  storage:',
          '    provider: memory',
        ].join('\n'),
      );
      const setup = await loadRouterSetup({ configPath, env: {} });
      expect(setup.plugins.map((p) => p.name).slice(0, 4)).toEqual(['telemetry', 'access-logs', 'cache-tags', 'response-cache']);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('loads nothing when telemetry and access logs are off (the defaults)', async () => {
    const config = parseConfig({ version: '1', telemetry: { metrics: { prometheus: { enabled: false } } } }, { env: {}, sections });
    expect(await telemetryPlugins(config)).toEqual([]);
    expect(await accessLogsPlugins(config)).toEqual([]);
    expect(await telemetryPlugins(parseConfig({ version: '1' }, { env: {}, sections }))).toEqual([]);
  });

  it('takes the switches from the environment', async () => {
    const config = parseConfig({ version: '1' }, { env: { TELEMETRY_TRACING_ENABLED: 'true', TELEMETRY_TRACING_SAMPLING_RATE: '0.5', ACCESS_LOGS_ENABLED: 'true' }, sections });
    expect(config.sections.telemetry).toMatchObject({ tracing: { enabled: true, sampling_rate: 0.5 } });
    expect(await accessLogsPlugins(config)).toHaveLength(1);
  });

  it('refuses bad values naming the key', () => {
    expect(() => parseConfig({ version: '1', telemetry: { tracing: { sampling_rate: 2 } } }, { env: {}, sections })).toThrow(/telemetry\.tracing\.sampling_rate/);
    expect(() => parseConfig({ version: '1', telemetry: { tracing: { exporters: [{ exporter: 'jaeger' }] } } }, { env: {}, sections })).toThrow(
      /telemetry\.tracing\.exporters\[0\]\.exporter/,
    );
    expect(() => parseConfig({ version: '1', telemetry: { tracing: { exporter: 'http' } } }, { env: {}, sections })).toThrow(/exporter/);
    expect(() => useTelemetry({ tracing: { enabled: true, exporters: [{ endpoint: 'not a url' }] } })).toThrow(/\[telemetry\] telemetry\.tracing\.exporters\[0\]\.endpoint/);
  });

  it('honours OTEL_SERVICE_NAME and the OTLP endpoint variables as the OpenTelemetry spec defines them', () => {
    expect(resolveServiceName(undefined, {})).toBe('switchyard');
    expect(resolveServiceName(undefined, { OTEL_SERVICE_NAME: 'from-env' })).toBe('from-env');
    expect(resolveServiceName('from-file', { OTEL_SERVICE_NAME: 'from-env' })).toBe('from-file');

    const defaults = telemetryOptionsSchema.parse({ tracing: { enabled: true } });
    expect(exportTargets('traces', defaults.tracing.exporters, {}).map((t) => t.url)).toEqual(['http://localhost:4318/v1/traces']);
    expect(exportTargets('traces', defaults.tracing.exporters, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318/' }).map((t) => t.url)).toEqual(['http://otel:4318/v1/traces']);
    expect(exportTargets('metrics', [], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' }).map((t) => t.url)).toEqual(['http://otel:4318/v1/metrics']);
    expect(
      exportTargets('traces', [], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom' }).map((t) => t.url),
    ).toEqual(['http://traces:9999/custom']);
    const configured = telemetryOptionsSchema.parse({
      tracing: {
        exporters: [
          { endpoint: 'http://mine:4318', path: '/otlp/v1/traces' },
          { endpoint: 'http://off:4318', disabled: true },
        ],
      },
    });
    expect(exportTargets('traces', configured.tracing.exporters, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' }).map((t) => t.url)).toEqual([
      'http://mine:4318/otlp/v1/traces',
    ]);
  });
});
