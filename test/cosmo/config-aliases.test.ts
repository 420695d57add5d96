/**
 * Cosmo's names for settings Switchyard has (INTERFACES.md, "Config"):
 * `storage_providers.redis[]`, `response_cache.storage.provider: redis`,
 * `telemetry.metrics.prometheus.*`, `traffic_shaping.router.max_request_body_size`. They load as Switchyard's names; one
 * setting under both names is an error naming both; any other Cosmo key still
 * stops startup with its path.
 */
import { describe, expect, it } from 'vitest';
import { builtinSections } from '../../src/cli/builtin-plugins.js';
import { ConfigError, parseConfigText, type LoadedConfig } from '../../src/kernel/config/index.js';

const sections = builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));

function load(text: string, env: Record<string, string> = {}): LoadedConfig {
  return parseConfigText(text, { env, sections, file: 'router.config.yaml' });
}

function failure(text: string, env: Record<string, string> = {}): string {
  try {
    load(text, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('Cosmo key aliases', () => {
  it('storage_providers.redis[] is storage_providers.sharedstore[], and response_cache.storage.provider: redis is sharedstore', () => {
    const config = load(`version: "1"
storage_providers:
  redis:
    - id: my_redis
      urls: ["redis://localhost:6379"]
      cluster_enabled: false
response_cache:
  enabled: true
  storage:
    provider: redis
    provider_id: my_redis
`);
    expect(config.core.storage_providers.sharedstore).toEqual([{ id: 'my_redis', urls: ['redis://localhost:6379'], cluster_enabled: false }]);
    expect(config.sections.response_cache).toMatchObject({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'my_redis' } });
  });

  it('telemetry.metrics.prometheus.{enabled, listen_addr, path} are metrics.*', () => {
    const config = load(`version: "1"
telemetry:
  metrics:
    prometheus:
      enabled: true
      listen_addr: 127.0.0.1:9090
      path: /prom
`);
    expect(config.core.metrics).toEqual({ enabled: true, listen_addr: '127.0.0.1:9090', path: '/prom' });
    expect(config.sections).not.toHaveProperty('telemetry');
  });

  it('traffic_shaping.router.max_request_body_size is limits.max_request_body, beside the router keys both share', () => {
    const config = load(`version: "1"
traffic_shaping:
  router:
    max_request_body_size: 5MB
    decompression_enabled: false
    response_compression_min_size: 8KiB
`);
    expect(config.core.limits.max_request_body).toBe(5_000_000);
    expect(config.core.traffic_shaping.router).toEqual({ decompression_enabled: false, response_compression_enabled: true, response_compression_min_size: 8192 });
    expect(
      failure(`version: "1"
limits:
  max_request_body: 2MB
traffic_shaping:
  router:
    max_request_body_size: 5MB
`),
    ).toContain(
      "traffic_shaping.router.max_request_body_size: and limits.max_request_body set the same thing (traffic_shaping.router.max_request_body_size is Cosmo's name for it); keep one of them (line 6)",
    );
    expect(
      failure(`version: "1"
traffic_shaping:
  router:
    max_request_body_size: lots
`),
    ).toMatch(/traffic_shaping\.router\.max_request_body_size: .*\(line 4\)/);
  });

  it('is the same config as the one written with Switchyard names', () => {
    const cosmo = load(`version: "1"
storage_providers: { redis: [{ id: r, urls: ["redis://h:6379"] }] }
telemetry: { metrics: { prometheus: { enabled: true } } }
`);
    const ours = load(`version: "1"
storage_providers: { sharedstore: [{ id: r, urls: ["redis://h:6379"] }] }
metrics: { enabled: true }
`);
    expect(cosmo).toEqual(ours);
  });

  it('environment variables use Switchyard names and still override an aliased value', () => {
    const config = load(
      `version: "1"
telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:9090" } } }
`,
      { METRICS_LISTEN_ADDR: '127.0.0.1:9191' },
    );
    expect(config.core.metrics).toMatchObject({ enabled: true, listen_addr: '127.0.0.1:9191' });
  });

  it('refuses one setting given under both names, naming both', () => {
    const message = failure(`version: "1"
storage_providers:
  redis: [{ id: a, urls: ["redis://h:6379"] }]
  sharedstore: [{ id: b, urls: ["redis://h:6379"] }]
metrics:
  listen_addr: 127.0.0.1:1
telemetry:
  metrics:
    prometheus:
      listen_addr: 127.0.0.1:2
`);
    expect(message).toContain(
      "storage_providers.redis: and storage_providers.sharedstore set the same thing (storage_providers.redis is Cosmo's name for it); keep one of them (line 3)",
    );
    expect(message).toContain(
      "telemetry.metrics.prometheus.listen_addr: and metrics.listen_addr set the same thing (telemetry.metrics.prometheus.listen_addr is Cosmo's name for it); keep one of them (line 10)",
    );
  });

  it('reports a bad value under the name the file used', () => {
    const message = failure(`version: "1"
storage_providers:
  redis:
    - id: r
      urls: ["http://not-redis"]
telemetry:
  metrics:
    prometheus:
      path: metrics
`);
    expect(message).toMatch(/storage_providers\.redis\[0\]\.urls\[0\]: .*\(line 5\)/);
    expect(message).toMatch(/telemetry\.metrics\.prometheus\.path: must start with "\/" \(line 9\)/);
  });

  it('still stops on Cosmo keys for features Switchyard lacks, with their path', () => {
    const message = failure(`version: "1"
telemetry:
  metrics:
    prometheus:
      enabled: true
      graphql_cache: true
pyroscope:
  enabled: true
graph:
  token: abc
`);
    expect(message).toContain('telemetry.metrics.prometheus: unknown key "graphql_cache"');
    expect(message).toContain('unknown key "pyroscope"');
    expect(message).toContain('graph: unknown key "token"');
  });

  it('leaves other telemetry keys to validation', () => {
    const message = failure(`version: "1"
telemetry:
  resource_attributes: []
  metrics:
    prometheus:
      enabled: true
`);
    expect(message).toMatch(/telemetry: unknown key "resource_attributes"/);
  });
});
