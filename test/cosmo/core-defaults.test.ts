/**
 * Switchyard's core defaults next to Cosmo Router's, one table per config
 * section. Cosmo's values are copied from its source (wundergraph/cosmo,
 * read 2026-11-27 at 6e0a147): `router/pkg/config/config.schema.json`
 * (`schema`) and, where the schema gives no default, the `envDefault` tags
 * of `router/pkg/config/config.go` (`config.go`), which are what Cosmo
 * applies. For each row the test checks our default, what `config migrate`
 * writes for a Cosmo file that leaves the key out, and that every
 * difference is listed in docs/coming-from-cosmo.md.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { builtinSections } from '../../src/cli/builtin-plugins.js';
import { migrateCosmoConfig } from '../../src/cli/cosmo-config-migration.js';
import { parseConfig } from '../../src/kernel/config/index.js';
import { COSMO_DEFAULT_ALLOW_HEADERS } from './cors-headers.js';

/** One default, ours beside Cosmo's. */
interface DefaultRow {
  /** Our key path, dotted. */
  readonly key: string;
  /** Our default, as written in router.config.yaml. */
  readonly ours: unknown;
  /** Cosmo's key path, where it differs from ours. */
  readonly cosmoKey?: string;
  /** Cosmo's default, as Cosmo writes it. */
  readonly cosmo: unknown;
  /** Where Cosmo's value comes from. */
  readonly source: 'schema' | 'config.go' | 'router.go';
  /** Cosmo's default in our key's terms (what `config migrate` should write); `null` when we have no equivalent setting. */
  readonly cosmoAsOurs: unknown;
  /** Whether `config migrate` writes Cosmo's default when the Cosmo file leaves the key out. */
  readonly migrateCarries: boolean;
}

const SECTIONS: Readonly<Record<string, readonly DefaultRow[]>> = {
  cors: [
    { key: 'cors.enabled', ours: false, cosmo: true, source: 'schema', cosmoAsOurs: true, migrateCarries: true },
    { key: 'cors.allow_origins', ours: ['*'], cosmo: ['*'], source: 'schema', cosmoAsOurs: ['*'], migrateCarries: false },
    { key: 'cors.allow_methods', ours: ['GET', 'POST', 'HEAD'], cosmo: ['GET', 'POST', 'HEAD'], source: 'schema', cosmoAsOurs: ['GET', 'POST', 'HEAD'], migrateCarries: true },
    {
      key: 'cors.allow_headers',
      ours: ['Origin', 'Content-Length', 'Content-Type'],
      // config.go's default; router.go adds its defaultCorsHeaders to any list (Authorization, client name and version, trace context, x-wg-*).
      cosmo: ['Origin', 'Content-Length', 'Content-Type'],
      source: 'config.go',
      cosmoAsOurs: COSMO_DEFAULT_ALLOW_HEADERS,
      migrateCarries: true,
    },
    { key: 'cors.allow_credentials', ours: false, cosmo: true, source: 'schema', cosmoAsOurs: true, migrateCarries: true },
    { key: 'cors.max_age', ours: '5m', cosmo: '5m', source: 'schema', cosmoAsOurs: '5m', migrateCarries: false },
  ],
  'traffic_shaping (timeouts)': [
    { key: 'traffic_shaping.all.request_timeout', ours: '30s', cosmo: '60s', source: 'config.go', cosmoAsOurs: '60s', migrateCarries: true },
    // dial_timeout (30s), tls_handshake_timeout (10s), keep_alive_idle_timeout (90s): no such settings here; Node's agent defaults apply.
    { key: 'traffic_shaping.all.max_response_body', ours: '64MiB', cosmo: null, source: 'config.go', cosmoAsOurs: null, migrateCarries: false },
  ],
  'traffic_shaping (retries)': [
    { key: 'traffic_shaping.all.retry.enabled', ours: true, cosmo: true, source: 'config.go', cosmoAsOurs: true, migrateCarries: true },
    // Cosmo counts retries (5), we count attempts, the first included.
    { key: 'traffic_shaping.all.retry.max_attempts', ours: 3, cosmo: 5, source: 'schema', cosmoAsOurs: 6, migrateCarries: true },
    { key: 'traffic_shaping.all.retry.interval', ours: '50ms', cosmo: '3s', source: 'schema', cosmoAsOurs: '3s', migrateCarries: true },
    { key: 'traffic_shaping.all.retry.max_duration', ours: '2s', cosmo: '10s', source: 'schema', cosmoAsOurs: '10s', migrateCarries: true },
    { key: 'traffic_shaping.all.circuit_breaker.enabled', ours: false, cosmo: false, source: 'config.go', cosmoAsOurs: false, migrateCarries: false },
  ],
  'body limit': [
    {
      key: 'limits.max_request_body',
      ours: '1MB',
      cosmoKey: 'traffic_shaping.router.max_request_body_size',
      cosmo: '5MB',
      source: 'config.go',
      cosmoAsOurs: '5MB',
      migrateCarries: true,
    },
  ],
  'file watching': [
    { key: 'execution_config.file.watch', ours: true, cosmo: false, source: 'schema', cosmoAsOurs: false, migrateCarries: true },
    // Cosmo polls every watch_interval (1s); Switchyard reacts to file system events, so there is no interval.
  ],
  shutdown: [
    // Cosmo's shutdown_delay bounds the whole shutdown (60s); ours is how long listeners keep accepting after SIGTERM.
    { key: 'shutdown_delay', ours: '0s', cosmo: '60s', source: 'schema', cosmoAsOurs: null, migrateCarries: false },
    // The schema says 20s; config.go's envDefault, which Cosmo applies, is 30s.
    { key: 'grace_period', ours: '30s', cosmo: '30s', source: 'config.go', cosmoAsOurs: '30s', migrateCarries: false },
  ],
  engine: [
    { key: 'engine.enable_single_flight', ours: true, cosmo: true, source: 'schema', cosmoAsOurs: true, migrateCarries: false },
    { key: 'engine.enable_multi_fetch', ours: false, cosmo: false, source: 'schema', cosmoAsOurs: false, migrateCarries: false },
    { key: 'engine.execution_plan_cache_size', ours: 1024, cosmo: 1024, source: 'schema', cosmoAsOurs: 1024, migrateCarries: false },
  ],
  subgraph_error_propagation: [
    { key: 'subgraph_error_propagation.mode', ours: 'pass-through', cosmo: 'wrapped', source: 'schema', cosmoAsOurs: 'wrapped', migrateCarries: true },
    { key: 'subgraph_error_propagation.attach_service_name', ours: false, cosmo: true, source: 'schema', cosmoAsOurs: true, migrateCarries: true },
    {
      key: 'subgraph_error_propagation.default_extension_code',
      ours: '',
      cosmo: 'DOWNSTREAM_SERVICE_ERROR',
      source: 'schema',
      cosmoAsOurs: 'DOWNSTREAM_SERVICE_ERROR',
      migrateCarries: true,
    },
    { key: 'subgraph_error_propagation.omit_locations', ours: true, cosmo: true, source: 'schema', cosmoAsOurs: true, migrateCarries: false },
    { key: 'subgraph_error_propagation.allowed_extension_fields', ours: ['code'], cosmo: ['code'], source: 'schema', cosmoAsOurs: ['code'], migrateCarries: false },
  ],
  'listener and playground': [
    { key: 'listen_addr', ours: 'localhost:3002', cosmo: 'localhost:3002', source: 'schema', cosmoAsOurs: 'localhost:3002', migrateCarries: false },
    { key: 'log_level', ours: 'info', cosmo: 'info', source: 'schema', cosmoAsOurs: 'info', migrateCarries: false },
    { key: 'playground.enabled', ours: true, cosmoKey: 'playground_enabled', cosmo: true, source: 'schema', cosmoAsOurs: true, migrateCarries: false },
    { key: 'introspection.enabled', ours: true, cosmoKey: 'introspection_enabled', cosmo: true, source: 'schema', cosmoAsOurs: true, migrateCarries: false },
  ],
};

const sections = builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));

/** A key's value once validated (durations in ms, sizes in bytes). */
function resolved(config: Record<string, unknown>, key: string): unknown {
  let node: unknown = parseConfig(config, { env: {}, sections }).core;
  for (const segment of key.split('.')) node = (node as Record<string, unknown>)[segment];
  return node;
}

/** `{a: {b: value}}` for `a.b`. */
function withKey(key: string, value: unknown): Record<string, unknown> {
  const config: Record<string, unknown> = { version: '1' };
  const segments = key.split('.');
  let node = config;
  for (const segment of segments.slice(0, -1)) node = (node[segment] = {}) as Record<string, unknown>;
  node[segments.at(-1)!] = value;
  return config;
}

const migrated = migrateCosmoConfig({ version: '1' });
const guide = readFile(new URL('../../docs/coming-from-cosmo.md', import.meta.url), 'utf8');

describe.each(Object.entries(SECTIONS))("defaults of %s, ours beside Cosmo Router's", (_section, rows) => {
  it.each(rows.map((row) => [row.key, row] as const))('%s defaults to what the table says', (key, row) => {
    expect(resolved({ version: '1' }, key)).toEqual(resolved(withKey(key, row.ours), key));
  });

  it.each(rows.map((row) => [row.key, row] as const))("config migrate writes Cosmo's %s only where the table says it does", (key, row) => {
    expect(migrated.notCarried).toEqual([]);
    const expected = row.migrateCarries ? row.cosmoAsOurs : row.ours;
    expect(resolved(migrated.config, key)).toEqual(resolved(withKey(key, expected), key));
  });

  it('lists every difference in docs/coming-from-cosmo.md', async () => {
    const text = await guide;
    for (const row of rows) {
      const differs = row.cosmoAsOurs === null || JSON.stringify(resolved(withKey(row.key, row.cosmoAsOurs), row.key)) !== JSON.stringify(resolved({ version: '1' }, row.key));
      if (differs) expect(text, `${row.key} differs from Cosmo's ${row.cosmoKey ?? row.key}`).toContain(`\`${row.key}\``);
    }
  });
});
