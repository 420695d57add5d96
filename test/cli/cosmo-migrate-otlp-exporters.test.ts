/**
 * `switchyard config migrate --from cosmo` carries Cosmo's OTLP exporters,
 * `exporter: http` and `exporter: grpc` alike, into a config the router
 * accepts; other exporter values are named as not carried.
 */
import { describe, expect, it } from 'vitest';
import { builtinSections } from '../../src/cli/builtin-plugins.js';
import { migrateCosmoConfig } from '../../src/cli/cosmo-config-migration.js';
import { parseConfig } from '../../src/kernel/config/index.js';

const sections = builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));

describe('config migrate --from cosmo: OTLP exporters', () => {
  it('carries exporter: grpc for traces and metrics, leaving out the path gRPC ignores', () => {
    const { config, notCarried } = migrateCosmoConfig({
      version: '1',
      telemetry: {
        tracing: {
          enabled: true,
          exporters: [
            { exporter: 'grpc', endpoint: 'http://collector:4317', path: '/v1/traces', headers: { 'x-api-key': 'k' }, batch_timeout: '2s', export_timeout: 5_000_000_000 },
            { exporter: 'http', endpoint: 'http://collector:4318', path: '/otlp/v1/traces' },
          ],
        },
        metrics: { otlp: { enabled: true, exporters: [{ exporter: 'grpc', endpoint: 'https://collector:4317', disabled: false }] } },
      },
    });
    expect(notCarried).toEqual([]);
    expect(config).toMatchObject({
      telemetry: {
        tracing: {
          enabled: true,
          exporters: [
            { exporter: 'grpc', endpoint: 'http://collector:4317', headers: { 'x-api-key': 'k' }, batch_timeout: '2s', export_timeout: '5000ms' },
            { exporter: 'http', endpoint: 'http://collector:4318', path: '/otlp/v1/traces' },
          ],
        },
        metrics: { otlp: { enabled: true, exporters: [{ exporter: 'grpc', endpoint: 'https://collector:4317', disabled: false }] } },
      },
    });
    const tracing = (config.telemetry as { tracing: { exporters: Array<Record<string, unknown>> } }).tracing;
    expect(tracing.exporters[0]).not.toHaveProperty('path');
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();
  });

  it('carries an exporter with every default as {}, leaving no hole in the list', () => {
    const { config, notCarried } = migrateCosmoConfig({
      version: '1',
      telemetry: { tracing: { enabled: true, exporters: [{}, { exporter: 'http', endpoint: 'http://c:4318' }] } },
    });
    expect(notCarried).toEqual([]);
    expect((config.telemetry as { tracing: { exporters: unknown[] } }).tracing.exporters).toEqual([{}, { exporter: 'http', endpoint: 'http://c:4318' }]);
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();
  });

  it('names an exporter value that is neither http nor grpc as not carried', () => {
    const { config, notCarried } = migrateCosmoConfig({
      version: '1',
      telemetry: {
        tracing: {
          enabled: true,
          exporters: [
            { exporter: 'jaeger', endpoint: 'http://j:14268' },
            { exporter: 'grpc', endpoint: 'http://c:4317' },
          ],
        },
      },
    });
    expect(notCarried).toEqual([{ path: 'telemetry.tracing.exporters[0]', why: 'only OTLP exporters (exporter: http or grpc)' }]);
    expect(config).toMatchObject({ telemetry: { tracing: { exporters: [{ exporter: 'grpc', endpoint: 'http://c:4317' }] } } });
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();
  });
});
