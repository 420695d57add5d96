import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  buildConfigSchema,
  duration,
  envBindings,
  parseConfig,
  readSection,
  z,
  type ConfigIssue,
  type ConfigSection,
  type EnvSource,
} from '../../../src/kernel/config/index.js';

const responseCache = {
  key: 'response_cache',
  plugin: 'response-cache',
  schema: z.strictObject({
    enabled: z.boolean().default(false),
    fallback_ttl: duration({ min: '1s' }).prefault('30s'),
    key_prefix: z.string().default('router_response_cache:'),
    storage: z
      .strictObject({
        provider: z.enum(['sharedstore', 'memory']).default('sharedstore'),
        provider_id: z.string().optional(),
        max_entries: z.int().min(1).default(10_000),
      })
      .optional(),
  }),
} satisfies ConfigSection;

const profiler = {
  key: 'profiler',
  schema: z.strictObject({
    enabled: z.boolean().default(false),
    basic_auth: z.strictObject({ username: z.string().optional(), password: z.string().optional() }).optional(),
    tags: z.record(z.string(), z.string()).default({}),
    application_name: z.string().default('io.switchyard.router'),
  }),
} satisfies ConfigSection;

const persistedOperations = {
  key: 'persisted_operations',
  schema: z.strictObject({
    storage: z
      .discriminatedUnion('provider', [
        z.strictObject({ provider: z.literal('file'), path: z.string() }),
        z.strictObject({ provider: z.literal('sharedstore'), provider_id: z.string() }),
        z.strictObject({ provider: z.literal('http'), url: z.string() }),
      ])
      .optional(),
  }),
} satisfies ConfigSection;

const sections = [responseCache, profiler, persistedOperations];

function load(env: EnvSource, raw: Record<string, unknown> = {}) {
  return parseConfig({ version: '1', ...raw }, { env, sections });
}

function issuesOf(env: EnvSource, raw: Record<string, unknown> = {}): ConfigIssue[] {
  try {
    load(env, raw);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  throw new Error('expected the configuration to be refused');
}

describe('environment variable names', () => {
  it('names a variable after the key path in upper snake case', () => {
    const variables = envBindings(buildConfigSchema(sections)).map((binding) => binding.variable);
    expect(variables).toEqual(
      expect.arrayContaining([
        'LISTEN_ADDR',
        'LOG_LEVEL',
        'EXECUTION_CONFIG_FILE_PATH',
        'ENGINE_ENABLE_SINGLE_FLIGHT',
        'TRAFFIC_SHAPING_ALL_REQUEST_TIMEOUT',
        'RESPONSE_CACHE_FALLBACK_TTL',
        'RESPONSE_CACHE_STORAGE_PROVIDER_ID',
        'PROFILER_BASIC_AUTH_PASSWORD',
        'PROFILER_TAGS',
        'PERSISTED_OPERATIONS_STORAGE_PROVIDER',
        'PERSISTED_OPERATIONS_STORAGE_URL',
      ]),
    );
  });

  it('gives no variable to version, plugins, list items or per-subgraph entries', () => {
    const variables = envBindings(buildConfigSchema(sections)).map((binding) => binding.variable);
    expect(variables).not.toContain('VERSION');
    expect(variables.some((name) => name.startsWith('PLUGINS'))).toBe(false);
    expect(variables.some((name) => name.startsWith('HEADERS'))).toBe(false);
    expect(variables.some((name) => name.startsWith('STORAGE_PROVIDERS'))).toBe(false);
    expect(variables.some((name) => name.startsWith('TRAFFIC_SHAPING_SUBGRAPHS'))).toBe(false);
  });
});

describe('environment overrides', () => {
  it('overrides a scalar string key over the file', () => {
    expect(load({ LISTEN_ADDR: '0.0.0.0:4000' }, { listen_addr: 'localhost:3002' }).core.listen_addr).toBe('0.0.0.0:4000');
  });

  it('overrides a boolean key with true or false', () => {
    const { core } = load({ ENGINE_ENABLE_SINGLE_FLIGHT: 'false', CORS_ENABLED: 'true' });
    expect(core.engine.enable_single_flight).toBe(false);
    expect(core.cors.enabled).toBe(true);
  });

  it('refuses a boolean that is not true or false, naming the variable', () => {
    expect(issuesOf({ ENGINE_ENABLE_SINGLE_FLIGHT: 'yes' })).toEqual([
      { path: 'engine.enable_single_flight', env: 'ENGINE_ENABLE_SINGLE_FLIGHT', message: 'expected true or false, got "yes"' },
    ]);
  });

  it('parses numbers strictly', () => {
    expect(load({ LIMITS_MAX_DEPTH: '12' }).core.limits.max_depth).toBe(12);
    expect(issuesOf({ LIMITS_MAX_DEPTH: '12abc' })).toEqual([{ path: 'limits.max_depth', env: 'LIMITS_MAX_DEPTH', message: 'expected a number, got "12abc"' }]);
    expect(issuesOf({ ENGINE_EXECUTION_PLAN_CACHE_SIZE: '0x10' })[0]?.message).toBe('expected a number, got "0x10"');
  });

  it('validates a converted number like a file value, naming the variable', () => {
    expect(issuesOf({ LIMITS_MAX_ALIASES: '-3' })).toEqual([{ path: 'limits.max_aliases', env: 'LIMITS_MAX_ALIASES', message: 'must be at least 0' }]);
  });

  it('splits a list-valued key on commas', () => {
    const { core } = load({ CORS_ALLOW_ORIGINS: 'https://a.example, https://b.example', CORS_ALLOW_METHODS: 'GET,POST' });
    expect(core.cors.allow_origins).toEqual(['https://a.example', 'https://b.example']);
    expect(core.cors.allow_methods).toEqual(['GET', 'POST']);
  });

  it('validates each list item and names the variable', () => {
    expect(issuesOf({ CORS_ALLOW_METHODS: 'GET,FETCH' })).toEqual([
      { path: 'cors.allow_methods[1]', env: 'CORS_ALLOW_METHODS', message: 'must be one of GET, POST, HEAD, PUT, PATCH, DELETE, OPTIONS; got "FETCH"' },
    ]);
  });

  it('reads a string map as comma-separated key=value pairs', () => {
    const config = load({ PROFILER_TAGS: 'team=api, region=eu-west=1' });
    expect(readSection(config, profiler)?.tags).toEqual({ team: 'api', region: 'eu-west=1' });
  });

  it('refuses a map entry without a key', () => {
    expect(issuesOf({ PROFILER_TAGS: 'team=api,oops' })).toEqual([
      { path: 'profiler.tags', env: 'PROFILER_TAGS', message: 'expected key=value pairs separated by commas, got "oops"' },
    ]);
  });

  it('sets a nested key of a plugin section that the file does not have', () => {
    const config = load({ PROFILER_BASIC_AUTH_PASSWORD: 's3cret', RESPONSE_CACHE_ENABLED: 'true' });
    expect(readSection(config, profiler)).toEqual({
      enabled: false,
      basic_auth: { password: 's3cret' },
      tags: {},
      application_name: 'io.switchyard.router',
    });
    expect(readSection(config, responseCache)?.enabled).toBe(true);
  });

  it('merges a nested override into the section the file has', () => {
    const config = load({ RESPONSE_CACHE_STORAGE_PROVIDER_ID: 'main' }, { response_cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'other' } } });
    expect(readSection(config, responseCache)?.storage).toEqual({ provider: 'sharedstore', provider_id: 'main', max_entries: 10_000 });
  });

  it('sets keys of a section whose schema is a union of objects', () => {
    const config = load({ PERSISTED_OPERATIONS_STORAGE_PROVIDER: 'http', PERSISTED_OPERATIONS_STORAGE_URL: 'https://cdn.example/ops' });
    expect(readSection(config, persistedOperations)?.storage).toEqual({ provider: 'http', url: 'https://cdn.example/ops' });
  });

  it('validates a plugin duration set by the environment and names the variable and the key', () => {
    const issues = issuesOf({ RESPONSE_CACHE_FALLBACK_TTL: '0s' });
    expect(issues).toEqual([{ path: 'response_cache.fallback_ttl', env: 'RESPONSE_CACHE_FALLBACK_TTL', plugin: 'response-cache', message: 'must be at least 1s' }]);
    expect(new ConfigError(issues).message).toContain('RESPONSE_CACHE_FALLBACK_TTL (response_cache.fallback_ttl): must be at least 1s');
  });

  it('ignores an empty variable', () => {
    expect(load({ LISTEN_ADDR: '' }, { listen_addr: 'localhost:5000' }).core.listen_addr).toBe('localhost:5000');
  });

  it('does not read version or plugins from the environment', () => {
    expect(load({ VERSION: '2', PLUGINS: 'x' }).core).toMatchObject({ version: '1', plugins: [] });
  });

  it('reports every bad variable at once', () => {
    expect(issuesOf({ ENGINE_ENABLE_MULTI_FETCH: 'on', METRICS_LISTEN_ADDR: 'nowhere', LOG_LEVEL: 'loud' }).map((issue) => issue.env)).toEqual([
      'ENGINE_ENABLE_MULTI_FETCH',
      'LOG_LEVEL',
      'METRICS_LISTEN_ADDR',
    ]);
  });

  it('does not change the object it was given', () => {
    const raw = { version: '1', cors: { enabled: false } };
    parseConfig(raw, { env: { CORS_ENABLED: 'true' } });
    expect(raw).toEqual({ version: '1', cors: { enabled: false } });
  });

  it('refuses an override below a key the file sets to something other than a mapping', () => {
    expect(issuesOf({ CORS_ENABLED: 'true' }, { cors: 'yes' })).toEqual([
      { path: 'cors.enabled', env: 'CORS_ENABLED', message: 'cannot be applied: a parent key in the file is not a mapping' },
      { path: 'cors', message: 'expected a mapping, got "yes"' },
    ]);
  });
});

describe("Cosmo Router's variable names", () => {
  const builtins = async () => (await import('../../../src/cli/builtin-plugins.js')).builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));
  const parse = async (env: EnvSource) => parseConfig({ version: '1' }, { env, sections: await builtins() });

  it('reads REQUIRE_AUTHENTICATION and the other names Cosmo gives settings Switchyard has', async () => {
    const config = await parse({
      REQUIRE_AUTHENTICATION: 'true',
      REJECT_OPERATION_IF_UNAUTHORIZED: 'true',
      TRACING_ENABLED: 'true',
      TRACING_SAMPLING_RATE: '0.25',
      METRICS_OTLP_ENABLED: 'true',
      PROMETHEUS_ENABLED: 'true',
      PROMETHEUS_LISTEN_ADDR: '127.0.0.1:9999',
      PROMETHEUS_HTTP_PATH: '/prom',
      APQ_ENABLED: 'true',
    });
    expect(config.sections.authorization).toMatchObject({ require_authentication: true, reject_operation_if_unauthorized: true });
    expect(config.sections.telemetry).toMatchObject({ tracing: { enabled: true, sampling_rate: 0.25 }, metrics: { otlp: { enabled: true } } });
    expect(config.core.metrics).toMatchObject({ enabled: true, listen_addr: '127.0.0.1:9999', path: '/prom' });
    expect(config.sections.automatic_persisted_queries).toMatchObject({ enabled: true });
  });

  it('leaves a key the file sets alone, as Cosmo (whose environment gives defaults) does', async () => {
    const sections = await builtins();
    const raw = { version: '1', authorization: { require_authentication: true }, metrics: { listen_addr: '127.0.0.1:9000' } };
    const config = parseConfig(raw, { env: { REQUIRE_AUTHENTICATION: 'false', PROMETHEUS_LISTEN_ADDR: '0.0.0.0:9100' }, sections });
    expect(config.sections.authorization).toMatchObject({ require_authentication: true });
    expect(config.core.metrics).toMatchObject({ listen_addr: '127.0.0.1:9000' });
  });

  it('reads values as Go does: 1 and T are true, exponents are numbers, a bare :port is every interface', async () => {
    const config = await parse({ REQUIRE_AUTHENTICATION: '1', TRACING_ENABLED: 'T', TRACING_SAMPLING_RATE: '1e-1', PROMETHEUS_LISTEN_ADDR: ':8088' });
    expect(config.sections.authorization).toMatchObject({ require_authentication: true });
    expect(config.sections.telemetry).toMatchObject({ tracing: { enabled: true, sampling_rate: 0.1 } });
    expect(config.core.metrics).toMatchObject({ listen_addr: '0.0.0.0:8088' });
    await expect(parse({ REQUIRE_AUTHENTICATION: 'yes' })).rejects.toThrow(/REQUIRE_AUTHENTICATION/);
  });

  it("lets Switchyard's own variable win, and names Cosmo's variable in a refusal", async () => {
    const config = await parse({ REQUIRE_AUTHENTICATION: 'true', AUTHORIZATION_REQUIRE_AUTHENTICATION: 'false' });
    expect(config.sections.authorization).toMatchObject({ require_authentication: false });
    await expect(parse({ TRACING_SAMPLING_RATE: 'lots' })).rejects.toThrow(/TRACING_SAMPLING_RATE/);
  });
});
