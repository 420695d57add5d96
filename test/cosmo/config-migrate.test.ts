/**
 * `switchyard config migrate --from cosmo`: Cosmo-shaped router configs
 * (written from the keys of Cosmo's config.go) converted by the CLI, and the
 * router started on the result.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { builtinSections } from '../../src/cli/builtin-plugins.js';
import { migrateCosmoConfig, validated } from '../../src/cli/cosmo-config-migration.js';
import { parseConfig } from '../../src/kernel/config/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { freePort, runCli, spawnCli, waitFor } from '../cli/run-cli.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';
import { wgcRouterCompose } from './wgc.js';
import { COSMO_DEFAULT_ALLOW_HEADERS } from './cors-headers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const sections = builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));
let dir: string;
let library: TestSubgraph;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-migrate-'));
  library = await startSubgraph(librarySubgraph());
  await writeFile(join(dir, 'library.graphql'), library.typeDefs);
  await writeFile(join(dir, 'graph.yaml'), `version: 1\nsubgraphs:\n  - name: library\n    routing_url: ${library.url}\n    schema:\n      file: ./library.graphql\n`);
  await wgcRouterCompose('graph.yaml', 'config.json', dir);
});

afterAll(async () => {
  await library?.close();
  await rm(dir, { recursive: true, force: true });
});

async function migrate(name: string, cosmo: string): Promise<{ code: number | null; stdout: string; stderr: string; output: Record<string, unknown>; file: string }> {
  await writeFile(join(dir, `${name}.cosmo.yaml`), cosmo);
  const file = join(dir, `${name}.yaml`);
  const result = await runCli(['config', 'migrate', '--from', 'cosmo', '-i', `${name}.cosmo.yaml`, '-o', file], { cwd: dir });
  const output = parseYaml(await readFile(file, 'utf8').catch(() => '{}')) as Record<string, unknown>;
  return { ...result, output, file };
}

async function ask(port: number, query: string): Promise<unknown> {
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return response.json();
}

describe('switchyard config migrate --from cosmo', () => {
  it("converts a Cosmo config whose keys all carry, exits 0, and the router starts on the output and serves wgc's execution config", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const run = await migrate(
      'basic',
      `version: "1"
listen_addr: 127.0.0.1:${port}
log_level: info
execution_config:
  file:
    path: ./config.json
playground:
  enabled: false
introspection:
  enabled: true
engine:
  enable_single_flight: true
  execution_plan_cache_size: 512
telemetry:
  metrics:
    prometheus:
      enabled: true
      listen_addr: 127.0.0.1:${metricsPort}
      path: /metrics
graphql_path: /graphql
json_log: true
`,
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.output).toMatchObject({
      version: '1',
      listen_addr: `127.0.0.1:${port}`,
      execution_config: { file: { path: './config.json', watch: false } },
      playground: { enabled: false },
      engine: { enable_single_flight: true, execution_plan_cache_size: 512 },
      metrics: { enabled: true, listen_addr: `127.0.0.1:${metricsPort}`, path: '/metrics' },
    });
    const router = spawnCli(['router', '-c', run.file], { cwd: dir });
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok);
      expect(await ask(port, '{ book(id: "b1") { title } }')).toEqual({ data: { book: { title: 'Dune' } } });
      expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    } finally {
      router.kill('SIGTERM');
      await router.exited;
    }
  });

  it("writes Cosmo's defaults where Switchyard's differ, so behaviour does not change silently", () => {
    const { config, notCarried } = migrateCosmoConfig({ version: '1' });
    expect(notCarried).toEqual([]);
    expect(config).toMatchObject({
      execution_config: { file: { watch: false } },
      cors: { enabled: true, allow_credentials: true },
      traffic_shaping: { all: { request_timeout: '60s', retry: { enabled: true, max_attempts: 6, interval: '3s', max_duration: '10s' } } },
      limits: { max_request_body: '5MB', max_depth: 200, max_fields: 3500 },
      subgraph_error_propagation: { mode: 'wrapped', attach_service_name: true, default_extension_code: 'DOWNSTREAM_SERVICE_ERROR' },
      metrics: { enabled: true, listen_addr: '127.0.0.1:8088' },
      // Cosmo writes an access log line per request by default.
      access_logs: { enabled: true },
    });
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();
    expect(migrateCosmoConfig({ version: '1', access_logs: { enabled: false } }).config.access_logs).toEqual({ enabled: false });
    // Switchyard's access lines go through the router log at info: a warn log level would drop them, so migrate says so.
    const quiet = migrateCosmoConfig({ version: '1', log_level: 'warn' });
    expect(quiet.notCarried).toEqual([expect.objectContaining({ path: 'access_logs.enabled', why: expect.stringMatching(/log_level: warn leaves out; set log_level: info/) })]);
    expect(migrateCosmoConfig({ version: '1', log_level: 'warn', access_logs: { enabled: false } }).notCarried).toEqual([]);
  });

  it('writes a bare :port as 0.0.0.0:port: Cosmo (Go) binds every interface for it, Switchyard loopback', () => {
    const { config, notCarried } = migrateCosmoConfig({
      version: '1',
      listen_addr: ':3002',
      telemetry: { metrics: { prometheus: { listen_addr: ':8088' } } },
      connect_rpc: { enabled: false, server: { listen_addr: ' :5026' } },
    });
    expect(notCarried).toEqual([]);
    expect(config).toMatchObject({ listen_addr: '0.0.0.0:3002', metrics: { listen_addr: '0.0.0.0:8088' }, connect_rpc: { server: { listen_addr: '0.0.0.0:5026' } } });
    expect(migrateCosmoConfig({ version: '1', listen_addr: 'localhost:3002' }).config.listen_addr).toBe('localhost:3002');
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();
  });

  it('leaves out, naming why, an origin the router would refuse with the credentials Cosmo turns on by default', () => {
    const { config, notCarried } = migrateCosmoConfig({ version: '1', cors: { allow_origins: ['http://*.localhost:3000', 'https://*.com', 'https://app.example.com'] } });
    expect(config).toMatchObject({ cors: { allow_credentials: true, allow_origins: ['http://*.localhost:3000', 'https://app.example.com'] } });
    expect(notCarried).toEqual([expect.objectContaining({ path: 'cors.allow_origins[1]', why: expect.stringMatching(/two labels at least/) })]);
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();
  });

  it('turns security.block_non_persisted_operations into the safelist, naming the difference, so the router is not left open', () => {
    for (const persisted of [undefined, { safelist: { enabled: false }, storage: { provider_id: 'ops' } }]) {
      const cosmo = { version: '1', security: { block_non_persisted_operations: { enabled: true } }, ...(persisted ? { persisted_operations: persisted } : {}) };
      const { config, notCarried } = migrateCosmoConfig({ ...cosmo, storage_providers: { file_system: [{ id: 'ops', path: './ops' }] } });
      expect(config).toMatchObject({ persisted_operations: { enabled: true, safelist: true } });
      expect(notCarried).toEqual([
        expect.objectContaining({
          path: 'security.block_non_persisted_operations',
          why: expect.stringMatching(/^carried as persisted_operations\.safelist: true, .*sent as text/),
        }),
        // Cosmo's file_system provider has another layout (its own test below).
        ...(persisted ? [expect.objectContaining({ path: 'persisted_operations.storage' })] : []),
      ]);
    }
  });

  it('carries the common sections and names each key it cannot carry, exiting 1; the output still starts', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const run = await migrate(
      'full',
      `version: "1"
listen_addr: 127.0.0.1:${port}
log_level: debug
instance_id: router-1
graph:
  token: \${GRAPH_API_TOKEN}
execution_config:
  file:
    path: ./config.json
    watch: true
cors:
  enabled: true
  allow_origins: ["https://app.example"]
  allow_methods: [GET, POST]
  allow_credentials: false
  max_age: 10m
headers:
  all:
    request:
      - op: propagate
        named: Authorization
      - op: propagate
        matching: "^X-Tenant-.*"
        rename: x-tenant
      - op: set
        name: X-Router
        value: switchyard
      - op: set
        name: X-User
        value_from:
          context_field: operation_name
    response:
      - op: propagate
        named: Cache-Control
  subgraphs:
    library:
      request:
        - op: propagate
          named: X-Library
traffic_shaping:
  all:
    request_timeout: 15s
    dial_timeout: 5s
    retry:
      enabled: true
      max_attempts: 2
      interval: 100ms
      max_duration: 3s
  subgraphs:
    library:
      request_timeout: 5s
  router:
    max_request_body_size: 2MB
    decompression_enabled: false
    response_compression_min_size: 16KiB
engine:
  enable_single_flight: false
  execution_plan_cache_size: 256
  max_concurrent_resolvers: 64
security:
  depth_limit:
    enabled: true
    limit: 10
  complexity_limits:
    total_fields:
      enabled: true
      limit: 500
    root_fields:
      enabled: true
      limit: 5
  block_mutations:
    enabled: true
subgraph_error_propagation:
  enabled: true
  mode: pass-through
  attach_service_name: false
  allowed_extension_fields: [code, reason]
  propagate_status_codes: true
storage_providers:
  redis:
    - id: cache
      urls: ["redis://localhost:6379"]
  file_system:
    - id: pq
      path: ./operations
persisted_operations:
  log_unknown: true
  safelist:
    enabled: false
  storage:
    provider_id: pq
automatic_persisted_queries:
  enabled: true
  cache:
    ttl: 600
    size: 50MB
telemetry:
  service_name: my-router
  tracing:
    enabled: true
  metrics:
    prometheus:
      listen_addr: 127.0.0.1:${metricsPort}
      exclude_metrics: ["^go_"]
pyroscope:
  enabled: false
  server_address: http://localhost:4040
  upload_rate: 30s
connect_rpc:
  enabled: false
  server:
    listen_addr: 127.0.0.1:5026
    base_url: http://localhost:5026
rate_limit:
  enabled: true
`,
    );
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines.every((line) => line.startsWith('not carried: '))).toBe(true);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^not carried: graph\.token: /),
        expect.stringMatching(/^not carried: headers\.all\.request\[3\]: value_from is not supported/),
        expect.stringMatching(/^not carried: headers\.all\.response: /),
        expect.stringMatching(/^not carried: traffic_shaping\.all\.dial_timeout: /),
        expect.stringMatching(/^not carried: engine\.max_concurrent_resolvers: /),
        expect.stringMatching(/^not carried: security\.complexity_limits\.root_fields: /),
        expect.stringMatching(/^not carried: security\.block_mutations: /),
        expect.stringMatching(/^not carried: subgraph_error_propagation\.propagate_status_codes: /),
        expect.stringMatching(/^not carried: automatic_persisted_queries\.cache\.size: /),
        expect.stringMatching(/^not carried: telemetry\.metrics\.prometheus\.exclude_metrics: /),
        expect.stringMatching(/^not carried: instance_id: /),
        expect.stringMatching(/^not carried: rate_limit: no rate limiting$/),
        expect.stringMatching(/^not carried: persisted_operations\.storage: Cosmo's file_system provider \("pq"\) reads <path>\/<sha256>\.json for every client; /),
      ]),
    );
    expect(run.output).not.toHaveProperty('persisted_operations.storage');
    expect(run.stdout).toMatch(/^wrote .*full\.yaml \(\d+ keys not carried\)\n$/);
    expect(run.output).toMatchObject({
      log_level: 'debug',
      telemetry: { service_name: 'my-router', tracing: { enabled: true } },
      execution_config: { file: { path: './config.json', watch: true } },
      cors: {
        enabled: true,
        allow_origins: ['https://app.example'],
        // Cosmo adds HEAD, GET, POST and its client headers to what the file lists.
        allow_methods: ['GET', 'POST', 'HEAD'],
        allow_headers: COSMO_DEFAULT_ALLOW_HEADERS,
        allow_credentials: false,
        max_age: '10m',
      },
      headers: {
        all: {
          request: [
            { op: 'propagate', named: 'Authorization' },
            { op: 'propagate', matching: '^X-Tenant-.*', rename: 'x-tenant' },
            { op: 'set', name: 'X-Router', value: 'switchyard' },
          ],
        },
        subgraphs: { library: { request: [{ op: 'propagate', named: 'X-Library' }] } },
      },
      traffic_shaping: {
        all: { request_timeout: '15s', retry: { enabled: true, max_attempts: 3, interval: '100ms', max_duration: '3s' } },
        subgraphs: { library: { request_timeout: '5s' } },
        router: { decompression_enabled: false, response_compression_min_size: '16KiB' },
      },
      limits: { max_request_body: '2MB', max_depth: 10, max_fields: 500 },
      engine: { enable_single_flight: false, execution_plan_cache_size: 256 },
      subgraph_error_propagation: { mode: 'pass-through', attach_service_name: false, allowed_extension_fields: ['code', 'reason'] },
      storage_providers: { sharedstore: [{ id: 'cache', urls: ['redis://localhost:6379'] }] },
      persisted_operations: { enabled: true, log_unknown: true, safelist: false },
      automatic_persisted_queries: { enabled: true, cache: { ttl: '600s' } },
      metrics: { enabled: true, listen_addr: `127.0.0.1:${metricsPort}` },
      profiler: { enabled: false, server_address: 'http://localhost:4040', upload_interval: '30s', application_name: 'wundergraph.cosmo.router' },
      connect_rpc: { enabled: false, server: { listen_addr: '127.0.0.1:5026', base_url: 'http://localhost:5026' } },
    });
    const router = spawnCli(['router', '-c', run.file], { cwd: dir });
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok);
      expect(await ask(port, '{ book(id: "b2") { title } }')).toEqual({ data: { book: { title: 'Emma' } } });
    } finally {
      router.kill('SIGTERM');
      await router.exited;
    }
  });

  it("carries Cosmo's authentication and authorization sections key by key and names the keys it has no place for", () => {
    const { config, notCarried } = migrateCosmoConfig({
      version: '1',
      authentication: {
        jwt: {
          jwks: [
            { url: 'https://idp.example.com/.well-known/jwks.json', refresh_interval: '1m', algorithms: ['RS256'], made_up_key: true },
            // Cosmo's `audiences` is Switchyard's `audience`: the check carries.
            { url: 'https://other.example.com/jwks.json', audiences: ['https://api.example.com', 'graph'] },
            // An empty list checks nothing in Cosmo: no audience, and nothing to report.
            { url: 'https://third.example.com/jwks.json', audiences: [] },
          ],
          header_name: 'Authorization',
          header_value_prefix: 'Bearer',
        },
      },
      authorization: { require_authentication: true, reject_operation_if_unauthorized: false },
    });
    expect(config.authentication).toEqual({
      jwt: {
        jwks: [
          { url: 'https://idp.example.com/.well-known/jwks.json', refresh_interval: '1m', algorithms: ['RS256'] },
          { url: 'https://other.example.com/jwks.json', audience: ['https://api.example.com', 'graph'] },
          { url: 'https://third.example.com/jwks.json' },
        ],
        header_name: 'Authorization',
        header_value_prefix: 'Bearer',
      },
    });
    expect(config.authorization).toEqual({ require_authentication: true, reject_operation_if_unauthorized: false });
    expect(notCarried.map((entry) => entry.path)).toEqual(['authentication.jwt.jwks[0].made_up_key']);
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();
  });

  it('drops an entry or section left without a required key, reports each problem once at its Cosmo path, and writes a config the router accepts', async () => {
    const run = await migrate(
      'required',
      `version: "1"
storage_providers:
  redis:
    - id: ok
      urls: ["redis://localhost:6379"]
    - id: bad
      urls: ["test@localhost:8000", "test2@localhost:8001"]
automatic_persisted_queries:
  enabled: true
  storage:
    provider_id: ok
`,
    );
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /^not carried: storage_providers\.redis\[1\]\.urls\[0\]: Switchyard refuses the converted value: must be an absolute URL .* \(storage_providers\.redis\[1\] left out\)$/,
      ),
      expect.stringMatching(
        /^not carried: storage_providers\.redis\[1\]\.urls\[1\]: Switchyard refuses the converted value: must be an absolute URL .* \(storage_providers\.redis\[1\] left out\)$/,
      ),
    ]);
    expect(run.output).toMatchObject({
      storage_providers: { sharedstore: [{ id: 'ok', urls: ['redis://localhost:6379'] }] },
      automatic_persisted_queries: { storage: { provider_id: 'ok' } },
    });
    expect(() => parseConfig(run.output, { env: {}, sections })).not.toThrow();

    // No provider to verify tokens with, in Cosmo either: the section goes.
    const introspectionOnly = await migrate('auth-introspection', 'version: "1"\nauthentication:\n  ignore_introspection: true\n');
    expect(introspectionOnly.code).toBe(1);
    expect(introspectionOnly.stderr).toBe('not carried: authentication.jwt: Switchyard refuses the converted value: is required (authentication left out)\n');
    expect(introspectionOnly.output).not.toHaveProperty('authentication');
    expect(() => parseConfig(introspectionOnly.output, { env: {}, sections })).not.toThrow();
  });

  it('writes no config when none of the Cosmo authentication providers carries (fail closed: it would let every request in)', async () => {
    const run = await migrate(
      'symmetric',
      `version: "1"
authentication:
  jwt:
    jwks:
      - secret: not-a-url
        symmetric_algorithm: HS256
        header_key_id: k1
`,
    );
    expect(run.code).toBe(1);
    // One `error:` line for why, then one per problem (INTERFACES.md: problems one line each).
    expect(run.stderr.trim().split('\n')).toEqual([
      'error: symmetric.cosmo.yaml: authentication: none of the Cosmo authentication providers could be carried, and a config without them would let every request in, so it is not written; fix or replace the providers (Switchyard verifies JWTs from JWKS URLs) and run again',
      'error: symmetric.cosmo.yaml: authentication.jwt.jwks[0].url: is required',
    ]);
    await expect(readFile(run.file, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('takes out only an unknown key Switchyard refuses, reported once at its own path, and keeps the rest of the section', () => {
    const { config, notCarried } = validated({
      config: { version: '1', response_cache: { enabled: true, storage: { provider: 'memory', bogus: 2 }, fallback_ttl: '10s', other: true } },
      notCarried: [],
    });
    expect(config.response_cache).toEqual({ enabled: true, storage: { provider: 'memory' }, fallback_ttl: '10s' });
    expect(notCarried).toEqual([
      { path: 'response_cache.storage.bogus', why: 'Switchyard refuses the converted value: unknown key "bogus"' },
      { path: 'response_cache.other', why: 'Switchyard refuses the converted value: unknown key "other"' },
    ]);
    expect(() => parseConfig(config, { env: {}, sections })).not.toThrow();

    // What the section still lacks once the key is out is its own problem, not the unknown key's.
    const lacking = validated({ config: { version: '1', response_cache: { enabled: true, fallback_ttl: '10s', bogus: 1 } }, notCarried: [] });
    expect(lacking.notCarried).toEqual([
      { path: 'response_cache.bogus', why: 'Switchyard refuses the converted value: unknown key "bogus"' },
      { path: 'response_cache.storage', why: expect.stringMatching(/^Switchyard refuses the converted value: is required when enabled is true.* \(response_cache left out\)$/) },
    ]);
  });

  it("carries Cosmo's response_cache key by key and names the keys it has no place for", () => {
    const migration = migrateCosmoConfig({
      version: '1',
      response_cache: { enabled: true, storage: { provider: 'redis', provider_id: 'cache', bogus: 2 }, fallback_ttl: '10s' },
      storage_providers: { redis: [{ id: 'cache', urls: ['redis://localhost:6379'] }] },
    });
    expect(migration.config.response_cache).toEqual({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'cache' }, fallback_ttl: '10s' });
    expect(migration.notCarried).toEqual([{ path: 'response_cache.storage.bogus', why: 'no Switchyard equivalent' }]);
    expect(validated(migration).notCarried).toHaveLength(1);
    expect(() => parseConfig(migration.config, { env: {}, sections })).not.toThrow();
  });

  it('refuses to return a converted config it cannot make valid', () => {
    expect(() => validated({ config: { version: 2 }, notCarried: [] })).toThrow(/the converted config is still invalid, so it is not written[\s\S]*version: is required/);
  });

  it("keeps introspection and the playground off when either of Cosmo's two names for the switch says false", () => {
    for (const [current, deprecated] of [
      [true, false],
      [false, true],
      [false, undefined],
      [undefined, false],
    ]) {
      const { config, notCarried } = migrateCosmoConfig({
        version: '1',
        introspection_enabled: deprecated,
        introspection: { enabled: current },
        playground_enabled: deprecated,
        playground: { enabled: current },
      });
      expect(config).toMatchObject({ introspection: { enabled: false }, playground: { enabled: false } });
      expect(notCarried).toEqual([]);
    }
    expect(migrateCosmoConfig({ version: '1', introspection_enabled: true, introspection: { enabled: true } }).config).toMatchObject({ introspection: { enabled: true } });
  });

  it('reports security.complexity_limits.ignore_introspection as not carried when a complexity limit is written', async () => {
    const run = await migrate(
      'ignore-introspection',
      'version: "1"\nsecurity:\n  complexity_limits:\n    ignore_introspection: true\n    depth:\n      enabled: true\n      limit: 5\n',
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^not carried: security\.complexity_limits\.ignore_introspection: Switchyard applies limits\.max_depth and limits\.max_fields to introspection queries too/,
    );
    expect(run.output).toMatchObject({ limits: { max_depth: 5 } });
  });

  it('writes no limits for complexity_limits in measure mode, and says why', async () => {
    const run = await migrate(
      'measure',
      'version: "1"\nsecurity:\n  complexity_limits:\n    mode: measure\n    ignore_introspection: true\n    depth:\n      enabled: true\n      limit: 5\n    total_fields:\n      enabled: true\n      limit: 10\n',
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'not carried: security.complexity_limits.mode: Cosmo only measures these limits (it refuses no operation for them); Switchyard has no measuring mode, so complexity_limits.depth, complexity_limits.total_fields are not written as limits\n',
    );
    // Cosmo's parser limits (200 deep, 3500 fields) still apply.
    expect(run.output).toMatchObject({ limits: { max_depth: 200, max_fields: 3500 } });
  });

  it("reports a file_system persisted-operations provider, whose layout (object_prefix included) Switchyard's file store cannot read, as not carried", async () => {
    const withPrefix = await migrate(
      'po-fs',
      'version: "1"\nstorage_providers:\n  file_system:\n    - id: fs\n      path: ./ops\npersisted_operations:\n  storage:\n    provider_id: fs\n    object_prefix: my-client\n',
    );
    expect(withPrefix.code).toBe(1);
    expect(withPrefix.stderr).toMatch(
      /^not carried: persisted_operations\.storage: Cosmo's file_system provider \("fs"\) reads <path>\/<object_prefix>\/<sha256>\.json for every client; Switchyard's file store reads <path>\/<graph>\/operations\/<client>\/<id>\.json/,
    );
    expect(withPrefix.output).toMatchObject({ persisted_operations: { enabled: true } });
    expect(withPrefix.output).not.toHaveProperty('persisted_operations.storage');
  });

  it('reports persisted_operations without storage (Cosmo then reads its CDN) as not carried, unless persisted operations are disabled', async () => {
    const noStorage = await migrate('po-cdn', 'version: "1"\npersisted_operations:\n  log_unknown: true\n');
    expect(noStorage.code).toBe(1);
    expect(noStorage.stderr).toMatch(/^not carried: persisted_operations\.storage: not set: Cosmo then reads persisted operations from its CDN, which Switchyard does not; /);
    const disabled = await migrate('po-off', 'version: "1"\npersisted_operations:\n  disabled: true\n');
    expect(disabled.code).toBe(0);
    expect(disabled.output).toMatchObject({ persisted_operations: { enabled: false } });
  });

  it('names a __proto__ key as not carried instead of writing onto Object.prototype, and carries subgraphs named constructor or prototype', async () => {
    const { code, stderr, output } = await migrate(
      'proto',
      'version: "1"\ntraffic_shaping:\n  subgraphs:\n    __proto__:\n      request_timeout: 1s\n    constructor:\n      request_timeout: 2s\n    prototype:\n      request_timeout: 3s\nheaders:\n  all:\n    request:\n      - op: propagate\n        named: X-Tenant\n',
    );
    expect(code).toBe(1);
    expect(stderr).toContain('__proto__');
    expect(stderr).not.toMatch(/TypeError|unknown key request_timeout|constructor|prototype\b/);
    expect(({} as Record<string, unknown>).request_timeout).toBeUndefined();
    expect(output).toMatchObject({ headers: { all: { request: [{ op: 'propagate', named: 'X-Tenant' }] } } });
    const subgraphs = (output.traffic_shaping as { subgraphs?: object } | undefined)?.subgraphs ?? {};
    expect(subgraphs).toEqual({ constructor: { request_timeout: '2s' }, prototype: { request_timeout: '3s' } });
    expect(Object.hasOwn(subgraphs, '__proto__')).toBe(false);
  });

  it('reports a section that is not a mapping once, at its key, and carries the rest', () => {
    const { config, notCarried } = validated(migrateCosmoConfig({ version: '1', cors: 5, headers: ['x'], engine: null, listen_addr: '127.0.0.1:3002' }));
    expect(notCarried).toEqual([
      { path: 'cors', why: 'expected a mapping of keys, not 5' },
      { path: 'headers', why: 'expected a mapping of keys, not a list' },
    ]);
    expect(config).toMatchObject({ listen_addr: '127.0.0.1:3002' });
  });

  it('reads keys named like Object.prototype members as ordinary keys: clear reasons, no inherited values', () => {
    const source = JSON.parse(
      '{"version":"1","log_level":"constructor","toString":1,"constructor":"x","hasOwnProperty":{"a":1},"__proto__":{"log_level":"debug"},"headers":{"all":{"request":[{"op":"toString","named":"X-A"}]}}}',
    ) as Record<string, unknown>;
    const { config, notCarried } = migrateCosmoConfig(source);
    expect(Object.fromEntries(notCarried.map((entry) => [entry.path, entry.why]))).toEqual({
      log_level: 'unknown level "constructor"',
      toString: 'no Switchyard equivalent',
      constructor: 'no Switchyard equivalent',
      hasOwnProperty: 'no Switchyard equivalent',
      ['__proto__']: 'no Switchyard equivalent',
      'headers.all.request[0]': 'header rule op "toString" has no Switchyard equivalent (propagate, set)',
    });
    expect(config).not.toHaveProperty('log_level');
  });

  it('answers --help with exit 0 and a wrong --from or a missing option with exit 2', async () => {
    const help = await runCli(['config', 'migrate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--from <router>');
    const wrong = await runCli(['config', 'migrate', '--from', 'apollo', '-i', 'a.yaml', '-o', 'b.yaml'], { cwd: dir });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--from must be "cosmo"');
    const missing = await runCli(['config', 'migrate', '--from', 'cosmo', '-o', 'b.yaml'], { cwd: dir });
    expect(missing.code).toBe(2);
  });

  it('fails with exit 1 on an input it cannot read', async () => {
    const run = await runCli(['config', 'migrate', '--from', 'cosmo', '-i', 'missing.yaml', '-o', 'out.yaml'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(/^error: missing\.yaml: ENOENT[^\n]*$/);
    await writeFile(join(dir, 'list.yaml'), '- a\n- b\n');
    const list = await runCli(['config', 'migrate', '--from', 'cosmo', '-i', 'list.yaml', '-o', 'out.yaml'], { cwd: dir });
    expect(list.code).toBe(1);
    expect(list.stderr).toBe('error: list.yaml: expected a mapping of Cosmo router config keys\n');
  });

  it('fails with exit 1 and one line, no stack trace, on an output it cannot write', async () => {
    await writeFile(join(dir, 'in.yaml'), 'listen_addr: 127.0.0.1:3002\n');
    const run = await runCli(['config', 'migrate', '--from', 'cosmo', '-i', 'in.yaml', '-o', 'no-such-dir/out.yaml'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(/^error: no-such-dir\/out\.yaml: ENOENT[^\n]*$/);
  });
});
