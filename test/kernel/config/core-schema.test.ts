import { describe, expect, it } from 'vitest';
import { ConfigError, defaultConfig, parseConfig, type ConfigIssue, type CoreConfig } from '../../../src/kernel/config/index.js';

function parseCore(raw: Record<string, unknown>): CoreConfig {
  return parseConfig({ version: '1', ...raw }, { env: {} }).core;
}

function issuesOf(raw: unknown): ConfigIssue[] {
  try {
    parseConfig(raw, { env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  throw new Error('expected the configuration to be refused');
}

function linesOf(raw: unknown): string[] {
  return issuesOf(raw).map((issue) => `${issue.path}: ${issue.message}`);
}

describe('core config defaults', () => {
  it('fills every core key from a file holding only the version', () => {
    expect(parseCore({})).toEqual({
      version: '1',
      listen_addr: 'localhost:3002',
      log_level: 'info',
      shutdown_delay: 0,
      grace_period: 30_000,
      execution_config: { file: { watch: true } },
      graph: { name: 'default' },
      playground: { enabled: true },
      introspection: { enabled: true },
      subscriptions: { enabled: true, max_per_connection: 100, max_total: 10_000, max_queued_bytes: 4_194_304 },
      limits: { max_request_body: 1_000_000, max_depth: 0, max_aliases: 0, max_tokens: 0, max_batch_size: 0, max_fields: 5000 },
      csrf_prevention: { enabled: true, required_headers: ['graphql-preflight', 'apollo-require-preflight', 'x-apollo-operation-name'] },
      query_plans: {},
      subgraph_error_propagation: {
        enabled: true,
        mode: 'pass-through',
        rewrite_paths: true,
        omit_locations: true,
        omit_extensions: false,
        attach_service_name: false,
        default_extension_code: '',
        allow_all_extension_fields: false,
        allowed_extension_fields: ['code'],
        allowed_fields: [],
      },
      headers: { all: { request: [] }, subgraphs: {} },
      cors: {
        enabled: false,
        allow_origins: ['*'],
        allow_methods: ['GET', 'POST', 'HEAD'],
        allow_headers: ['Origin', 'Content-Length', 'Content-Type'],
        allow_credentials: false,
        max_age: 300_000,
      },
      traffic_shaping: {
        router: { decompression_enabled: true, response_compression_enabled: true, response_compression_min_size: 4096 },
        all: {
          request_timeout: 30_000,
          max_response_body: 67_108_864,
          retry: { enabled: true, max_attempts: 3, interval: 50, max_duration: 2_000 },
          circuit_breaker: { enabled: false, failure_threshold: 5, cooldown: 10_000 },
        },
        subgraphs: {},
      },
      engine: { enable_single_flight: true, enable_multi_fetch: false, execution_plan_cache_size: 1024 },
      metrics: { enabled: false, listen_addr: 'localhost:8088', path: '/metrics' },
      storage_providers: { sharedstore: [] },
      plugins: [],
    } satisfies CoreConfig);
  });

  it('gives the same fully defaulted config from defaultConfig()', () => {
    expect(defaultConfig()).toEqual(parseCore({}));
  });

  it('gives a fresh object from each defaultConfig() call', () => {
    const first = defaultConfig();
    first.cors.allow_origins.push('https://changed.example');
    expect(defaultConfig().cors.allow_origins).toEqual(['*']);
  });

  it('fills defaults inside a section that is only partly written', () => {
    const core = parseCore({ limits: { max_depth: 10 }, execution_config: { file: { path: 'graph.json' } } });
    expect(core.limits).toEqual({ max_request_body: 1_000_000, max_depth: 10, max_aliases: 0, max_tokens: 0, max_batch_size: 0, max_fields: 5000 });
    expect(core.execution_config.file).toEqual({ path: 'graph.json', watch: true });
  });

  it('converts durations to milliseconds and sizes to bytes', () => {
    const core = parseCore({
      limits: { max_request_body: '2MiB' },
      cors: { max_age: '10m' },
      traffic_shaping: { all: { request_timeout: '1m30s' }, subgraphs: { products: { request_timeout: '500ms' }, reviews: {} } },
    });
    expect(core.limits.max_request_body).toBe(2_097_152);
    expect(core.cors.max_age).toBe(600_000);
    expect(core.traffic_shaping.all.request_timeout).toBe(90_000);
    expect(core.traffic_shaping.subgraphs).toEqual({ products: { request_timeout: 500 }, reviews: {} });
  });
});

describe('required and enumerated core keys', () => {
  it('requires version and asks for the string "1"', () => {
    expect(linesOf({})).toEqual(['version: is required; start the file with version: "1"']);
    expect(linesOf({ version: 1 })).toEqual(['version: must be the string "1"; quote it: version: "1"']);
    expect(linesOf({ version: '2' })).toEqual(['version: must be "1"']);
  });

  it('refuses an unknown log level and lists the known ones', () => {
    expect(linesOf({ version: '1', log_level: 'verbose' })).toEqual(['log_level: must be one of trace, debug, info, warn, error, fatal, silent; got "verbose"']);
  });

  it('refuses a listen address that is not host:port', () => {
    expect(linesOf({ version: '1', listen_addr: 3002 })).toEqual(['listen_addr: expected host:port, such as "localhost:3002", got the number 3002']);
  });

  it('refuses negative or fractional limits and a zero plan cache', () => {
    expect(linesOf({ version: '1', limits: { max_depth: -1, max_tokens: 1.5 }, engine: { execution_plan_cache_size: 0 } })).toEqual([
      'limits.max_depth: must be at least 0',
      'limits.max_tokens: expected a whole number, got the number 1.5',
      'engine.execution_plan_cache_size: must be at least 1',
    ]);
  });

  it('refuses a bare number where a duration is expected', () => {
    expect(linesOf({ version: '1', traffic_shaping: { all: { request_timeout: '30' } } })).toEqual([
      'traffic_shaping.all.request_timeout: "30" has no unit; write 30s, 30ms or another duration with a unit',
    ]);
  });

  it('refuses a metrics path that does not start with a slash', () => {
    expect(linesOf({ version: '1', metrics: { path: 'metrics' } })).toEqual(['metrics.path: must start with "/"']);
  });

  it('refuses a top level that is not a mapping', () => {
    expect(linesOf(['version', '1'])).toEqual([': expected a mapping of config keys at the top level, got a list']);
  });
});

describe('unknown keys', () => {
  it('refuses an unknown top-level key', () => {
    expect(issuesOf({ version: '1', listen_address: 'x:1' })).toEqual([{ path: '', message: 'unknown key "listen_address"' }]);
  });

  it('refuses an unknown key in a section with the section path', () => {
    expect(linesOf({ version: '1', cors: { allow_origin: ['*'] } })).toEqual(['cors: unknown key "allow_origin"']);
  });

  it('refuses an unknown key two and three levels down', () => {
    expect(linesOf({ version: '1', execution_config: { file: { path: 'a.json', reload: true } }, traffic_shaping: { all: { timeout: '1s' } } })).toEqual([
      'execution_config.file: unknown key "reload"',
      'traffic_shaping.all: unknown key "timeout"',
    ]);
  });

  it('refuses an unknown key inside a list item and inside a per-subgraph entry', () => {
    expect(
      linesOf({
        version: '1',
        headers: { subgraphs: { products: { request: [{ op: 'set', name: 'x', value: 'y', negate: true }] } } },
        storage_providers: { sharedstore: [{ id: 'a', urls: ['redis://localhost:6379'], password: 'p' }] },
      }),
    ).toEqual(['headers.subgraphs.products.request[0]: unknown key "negate"', 'storage_providers.sharedstore[0]: unknown key "password"']);
  });
});

describe('header rules', () => {
  it("accepts the propagate, set and remove rules in Cosmo's shape", () => {
    const rules = [
      { op: 'propagate', named: 'Authorization' },
      { op: 'propagate', matching: '^X-Tenant-.*', default: 'none' },
      { op: 'propagate', named: 'X-User', rename: 'X-Forwarded-User' },
      { op: 'set', name: 'X-Router', value: 'switchyard' },
      { op: 'remove', named: 'Cookie' },
    ];
    const core = parseCore({ headers: { all: { request: rules }, subgraphs: { products: { request: [{ op: 'remove', matching: '^X-Internal' }] } } } });
    expect(core.headers.all.request).toEqual(rules);
    expect(core.headers.subgraphs.products?.request).toEqual([{ op: 'remove', matching: '^X-Internal' }]);
  });

  it('refuses a propagate rule with both named and matching', () => {
    expect(linesOf({ version: '1', headers: { all: { request: [{ op: 'propagate', named: 'a', matching: 'b' }] } } })).toEqual([
      'headers.all.request[0]: set exactly one of "named" or "matching"',
    ]);
  });

  it('refuses a propagate or remove rule with neither named nor matching', () => {
    expect(linesOf({ version: '1', headers: { all: { request: [{ op: 'propagate' }, { op: 'remove' }] } } })).toEqual([
      'headers.all.request[0]: set exactly one of "named" or "matching"',
      'headers.all.request[1]: set exactly one of "named" or "matching"',
    ]);
  });

  it('refuses a matching pattern that is not a valid regular expression', () => {
    const [line] = linesOf({ version: '1', headers: { all: { request: [{ op: 'propagate', matching: '(X-' }] } } });
    expect(line).toMatch(/^headers\.all\.request\[0\]\.matching: is not a valid regular expression: /);
  });

  it('refuses an unknown or missing op', () => {
    expect(linesOf({ version: '1', headers: { all: { request: [{ op: 'copy', named: 'a' }, { named: 'a' }] } } })).toEqual([
      'headers.all.request[0].op: must be one of propagate, set, remove; got "copy"',
      'headers.all.request[1].op: is required (one of propagate, set, remove)',
    ]);
  });

  it('refuses a set rule without a value', () => {
    expect(linesOf({ version: '1', headers: { all: { request: [{ op: 'set', name: 'X-A' }] } } })).toEqual(['headers.all.request[0].value: is required']);
  });
});

describe('storage providers', () => {
  it('accepts shared stores with redis and rediss URLs and defaults cluster_enabled to false', () => {
    const core = parseCore({
      storage_providers: {
        sharedstore: [
          { id: 'main', urls: ['redis://localhost:6379/0'] },
          { id: 'cluster', cluster_enabled: true, urls: ['rediss://a:7000', 'rediss://b:7001'] },
        ],
      },
    });
    expect(core.storage_providers.sharedstore).toEqual([
      { id: 'main', cluster_enabled: false, urls: ['redis://localhost:6379/0'] },
      { id: 'cluster', cluster_enabled: true, urls: ['rediss://a:7000', 'rediss://b:7001'] },
    ]);
  });

  it('refuses two providers with the same id, pointing at the second', () => {
    const url = 'redis://localhost:6379';
    expect(
      linesOf({
        version: '1',
        storage_providers: {
          sharedstore: [
            { id: 'a', urls: [url] },
            { id: 'b', urls: [url] },
            { id: 'a', urls: [url] },
          ],
        },
      }),
    ).toEqual(['storage_providers.sharedstore[2].id: duplicate id "a" (also used by item 0)']);
  });

  it('refuses a provider without URLs or with a URL that is not redis', () => {
    expect(
      linesOf({
        version: '1',
        storage_providers: {
          sharedstore: [
            { id: 'a', urls: [] },
            { id: 'b', urls: ['http://x'] },
          ],
        },
      }),
    ).toEqual([
      'storage_providers.sharedstore[0].urls: must list at least 1 item',
      'storage_providers.sharedstore[1].urls[0]: must start with redis:// or rediss://, got "http://"',
    ]);
  });
});

describe('cors and plugins', () => {
  it('refuses a CORS method outside the HTTP methods it knows', () => {
    expect(linesOf({ version: '1', cors: { allow_methods: ['GET', 'FETCH'] } })).toEqual([
      'cors.allow_methods[1]: must be one of GET, POST, HEAD, PUT, PATCH, DELETE, OPTIONS; got "FETCH"',
    ]);
  });

  it('refuses a cors.allow_headers entry that is no HTTP header name, naming it', () => {
    const header = "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~); got";
    expect(linesOf({ version: '1', cors: { allow_headers: ['Content-Type', 'X-A\r\nSet-Cookie: a=b', 'X-Ä', 'X A', ''] } })).toEqual([
      `cors.allow_headers[1]: ${header} "X-A\\r\\nSet-Cookie: a=b"`,
      `cors.allow_headers[2]: ${header} "X-Ä"`,
      `cors.allow_headers[3]: ${header} "X A"`,
      `cors.allow_headers[4]: ${header} ""`,
    ]);
    expect(parseCore({ cors: { allow_headers: ['Content-Type', 'GraphQL-Preflight', 'X-Apollo-Operation-Name', '*'] } }).cors.allow_headers).toHaveLength(4);
  });

  it('keeps third-party plugin entries with their options untouched', () => {
    const plugins = [{ package: '@acme/switchyard-audit', options: { level: 3, sinks: ['stdout'] } }, { package: './local-plugin.js' }];
    expect(parseCore({ plugins }).plugins).toEqual(plugins);
  });

  it('refuses a plugin entry without a package', () => {
    expect(linesOf({ version: '1', plugins: [{ options: {} }] })).toEqual(['plugins[0].package: is required']);
  });
});

describe('shutdown_delay and grace_period', () => {
  it('read durations from the file and the environment', () => {
    expect(parseCore({ shutdown_delay: '5s', grace_period: '1m' })).toMatchObject({ shutdown_delay: 5_000, grace_period: 60_000 });
    const fromEnv = parseConfig({ version: '1' }, { env: { SHUTDOWN_DELAY: '2s', GRACE_PERIOD: '10s' } }).core;
    expect(fromEnv).toMatchObject({ shutdown_delay: 2_000, grace_period: 10_000 });
  });

  it('refuse a bare number', () => {
    expect(linesOf({ version: '1', shutdown_delay: 5 })[0]).toMatch(/^shutdown_delay: /);
    expect(linesOf({ version: '1', grace_period: '30' })[0]).toMatch(/^grace_period: /);
  });
});
