/**
 * A Cosmo Router config turned into a Switchyard one (`switchyard config
 * migrate --from cosmo`): each key carried, or listed as not carried with
 * the reason. Where Cosmo's default differs from Switchyard's, the Cosmo
 * value is written explicitly, so the router behaves as before.
 * Reference: docs/coming-from-cosmo.md.
 */
import type { z } from 'zod';
import { formatKeyPath } from '../kernel/config/config-error.js';
import { ConfigError, envVariableName, parseConfig } from '../kernel/config/index.js';
import { buildConfigSchema } from '../kernel/config/load-config.js';
import { schemaDef, unwrapSchema } from '../kernel/config/schema-walk.js';
import { corsOriginProblem } from '../kernel/router/cors.js';
import { goListenAddress } from '../kernel/router/listen-address.js';
import { builtinSections } from './builtin-plugins.js';

/**
 * The one key that cannot be written as a plain property: assigning `__proto__`
 * sets an object's prototype. Other names of Object.prototype members
 * (`constructor`, `toString`) are ordinary keys here: a subgraph may be
 * named `constructor`, so every lookup below reads own properties only.
 */
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__']);

/** `table[key]` when the table has it as its own: `"constructor" in {}` holds, this does not. */
function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** One Cosmo key the migration could not carry. */
export interface NotCarried {
  /** Key path in the Cosmo file, e.g. `traffic_shaping.all.dial_timeout`. */
  readonly path: string;
  /** Why, phrased to follow `<path>: `. */
  readonly why: string;
}

/** Result of `migrateCosmoConfig`. */
export interface Migration {
  /** The Switchyard config, in the file's shape. */
  readonly config: Record<string, unknown>;
  /** Every Cosmo key not carried, in file order. */
  readonly notCarried: NotCarried[];
}

type Doc = Record<string, unknown>;
type Path = ReadonlyArray<string | number>;

export function isMapping(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema the router validates against: core keys and built-in plugin sections. */
const routerSchema = buildConfigSchema(builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin })));

/** Whether Switchyard's schema (this build's) has a key at `path` (objects, records and unions walked). */
export function schemaAccepts(path: Path): boolean {
  let current: z.core.$ZodType[] = [routerSchema];
  for (const segment of path) {
    const next: z.core.$ZodType[] = [];
    for (const schema of current.flatMap(unwrap)) {
      const def = schemaDef(schema);
      if (typeof segment === 'string' && UNSAFE_KEYS.has(segment)) return false;
      if (def.type === 'object' && typeof segment === 'string' && Object.hasOwn(def.shape, segment)) next.push(def.shape[segment]!);
      if (def.type === 'record' && typeof segment === 'string') next.push(def.valueType);
      if (def.type === 'array' && typeof segment === 'number') next.push(def.element);
    }
    if (next.length === 0) return false;
    current = next;
  }
  return true;
}

/** The schemas a value may meet: wrappers removed, both sides of pipes, every member of unions. */
function unwrap(schema: z.core.$ZodType): z.core.$ZodType[] {
  const inner = unwrapSchema(schema);
  const def = schemaDef(inner);
  if (def.type === 'pipe') return [...unwrap(def.in), ...unwrap(def.out)];
  if (def.type === 'union') return def.options.flatMap(unwrap);
  return [inner];
}

/** Cosmo keys with no Switchyard equivalent, and why (anything unlisted gets a generic reason). */
const NO_EQUIVALENT: Readonly<Record<string, string>> = {
  instance_id: 'Switchyard does not register instances with a control plane',
  controlplane_url: "Switchyard does not talk to Cosmo's control plane",
  graphql_metrics: 'schema usage is reported to Cosmo Cloud only; Switchyard exposes Prometheus metrics (metrics.*)',
  cluster: 'cluster names are a Cosmo Cloud concept',
  compliance: 'IP anonymization is not configurable: Switchyard does not log client IPs',
  tls: 'Switchyard serves plain HTTP; terminate TLS in front of it',
  cache_control_policy: 'no Cache-Control policy for client responses yet',
  mcp: 'Switchyard has no MCP server',
  demo_mode: 'no demo mode',
  modules: 'Cosmo modules are Go code; write a Switchyard plugin (plugins[])',
  file_upload:
    'file uploads (GraphQL multipart requests) are always on and forwarded to GraphQL-over-HTTP subgraphs as multipart requests; max_file_size and max_files are not carried: limits.max_request_body bounds the whole body and a map names at most 1000 paths',
  batching: 'request batching is limits.max_batch_size in Switchyard, with different rules; set it yourself',
  rate_limit: 'no rate limiting',
  cdn: "Switchyard does not read from Cosmo's CDN",
  events: 'event-driven subgraphs (EDFS) are not supported',
  cache_warmup: 'no plan cache warm-up',
  router_registration: 'Switchyard does not register with a control plane',
  override_routing_url: 'routing URLs come from the execution config; change them there (or compose with other routing_url values)',
  overrides: 'routing and subscription URLs come from the execution config; change them there',
  websocket: 'client WebSocket options are not configurable',
  subgraph_extension_propagation: 'subgraph response extensions are never forwarded to clients',
  split_config_poller: "Switchyard does not poll Cosmo's CDN",
  apollo_compatibility_flags: 'no Apollo compatibility flags',
  apollo_router_compatibility_flags: 'no Apollo Router compatibility flags',
  client_header: 'client names are read from graphql-client-name (and apollographql-client-name); not configurable',
  plugins: 'Cosmo router plugins are Go binaries; serve the service over gRPC and compose it as a grpc subgraph',
  watch_config: 'the router config file is not watched; restart to apply changes',
  log_service_name: 'log lines carry no service name field',
  poll_interval: 'Switchyard does not poll a control plane; execution_config.file.watch reloads the file',
  poll_jitter: 'Switchyard does not poll a control plane',
  localhost_fallback_inside_docker: 'routing URLs are used as written',
  dev_mode: 'no development mode; set subgraph_error_propagation and log_level yourself',
  shutdown_delay: 'the shutdown delay is not configurable in this build',
  grace_period: 'the grace period is not configurable in this build',
};

/** Switchyard's fixed behaviour for Cosmo keys it does not make configurable: given this value, nothing changes. */
const FIXED: Readonly<Record<string, unknown>> = {
  graphql_path: '/graphql',
  playground_path: '/',
  health_check_path: '/health',
  readiness_check_path: '/health/ready',
  liveness_check_path: '/health/live',
  json_log: true,
};

const LOG_LEVELS: Readonly<Record<string, string>> = {
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  dpanic: 'error',
  panic: 'fatal',
  fatal: 'fatal',
};

const ENV_REFERENCE = /\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/;

class Migrator {
  readonly config: Doc = { version: '1' };
  readonly notCarried: NotCarried[] = [];

  constructor(private readonly source: Doc) {}

  skip(path: Path, why: string): void {
    this.notCarried.push({ path: formatKeyPath(path), why });
  }

  get(path: Path): unknown {
    let node: unknown = this.source;
    for (const segment of path) {
      if ((!isMapping(node) && !Array.isArray(node)) || !Object.hasOwn(node, segment)) return undefined;
      node = (node as Record<string | number, unknown>)[segment];
    }
    return node;
  }

  /** Writes `value` at Switchyard's `to`, or reports `from` when this build's schema has no such key. */
  put(to: Path, value: unknown, from: Path = to): void {
    if (value === undefined) return;
    // A key such as `__proto__` (a subgraph name, say) would write onto Object.prototype.
    const unsafe = to.find((segment) => UNSAFE_KEYS.has(String(segment)));
    if (unsafe !== undefined) {
      this.skip(from, `"${String(unsafe)}" cannot be a key of a Switchyard config`);
      return;
    }
    if (!schemaAccepts(to)) {
      this.skip(from, `Switchyard has no ${formatKeyPath(to)} in this build`);
      return;
    }
    if (typeof value === 'string' && ENV_REFERENCE.test(value)) {
      this.skip(from, `Cosmo expands environment variables inside the file, Switchyard does not: set ${envVariableName(to.map(String))} instead`);
      return;
    }
    let node = this.config;
    for (const [i, segment] of to.slice(0, -1).entries()) {
      const key = String(segment);
      // A number after it makes it a list (`exporters[0]`), else a mapping.
      const list = typeof to[i + 1] === 'number';
      if (!Object.hasOwn(node, key) || (list ? !Array.isArray(node[key]) : !isMapping(node[key]))) node[key] = list ? [] : {};
      node = node[key] as Doc;
    }
    node[String(to.at(-1))] = value;
  }

  /** Reports every key under `path` except `handled` as not carried. */
  rest(path: Path, handled: readonly string[], why = 'no Switchyard equivalent'): void {
    const node = this.get(path);
    if (!isMapping(node)) return;
    for (const key of Object.keys(node)) if (!handled.includes(key)) this.skip([...path, key], why);
  }
}

/** A Cosmo listen address (Go binds every interface for a bare `:port`) as Switchyard must be told it. */
function cosmoListenAddress(value: unknown): unknown {
  return typeof value === 'string' ? goListenAddress(value) : value;
}

function durationOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // Cosmo reads a bare number as nanoseconds; Switchyard wants the unit written.
  if (typeof value === 'number') return `${Math.round(value / 1e6)}ms`;
  return undefined;
}

/**
 * A switch Cosmo has under a new name and a deprecated one: either one set to
 * `false` turns the feature off (router/core/router.go), so both must allow it.
 */
function putEnabled(m: Migrator, to: Path, current: Path, deprecated: Path): void {
  const values = [m.get(current), m.get(deprecated)];
  if (values.includes(false)) m.put(to, false, m.get(current) === false ? current : deprecated);
  else m.put(to, values[0] ?? values[1], values[0] === undefined ? deprecated : current);
}

function migrateTop(m: Migrator): void {
  const log = m.get(['log_level']);
  if (typeof log === 'string') {
    const level = ownEntry(LOG_LEVELS, log.toLowerCase());
    if (level) m.put(['log_level'], level);
    else m.skip(['log_level'], `unknown level ${JSON.stringify(log)}`);
  }
  m.put(['listen_addr'], cosmoListenAddress(m.get(['listen_addr'])));
  putEnabled(m, ['playground', 'enabled'], ['playground', 'enabled'], ['playground_enabled']);
  m.rest(['playground'], ['enabled', 'path'], 'not configurable');
  if (m.get(['playground', 'path']) !== undefined && m.get(['playground', 'path']) !== '/') m.skip(['playground', 'path'], 'GraphiQL is served at / only');
  putEnabled(m, ['introspection', 'enabled'], ['introspection', 'enabled'], ['introspection_enabled']);
  if (m.get(['introspection', 'secret'])) m.skip(['introspection', 'secret'], 'no introspection secret: introspection is on or off for everyone');
  m.rest(['introspection'], ['enabled', 'secret']);
  m.put(['query_plans', 'enabled'], m.get(['query_plans_enabled']), ['query_plans_enabled']);
  m.rest(['graph'], [], "Switchyard does not fetch graphs from Cosmo's control plane or CDN; serve the execution config from a file (execution_config.file.path)");
}

function migrateExecutionConfig(m: Migrator): void {
  const path = m.get(['execution_config', 'file', 'path']) ?? m.get(['router_config_path']);
  m.put(['execution_config', 'file', 'path'], path, m.get(['execution_config', 'file', 'path']) === undefined ? ['router_config_path'] : ['execution_config', 'file', 'path']);
  // Cosmo does not watch the file unless told to; Switchyard does by default.
  m.put(['execution_config', 'file', 'watch'], m.get(['execution_config', 'file', 'watch']) ?? false);
  const interval = m.get(['execution_config', 'file', 'watch_interval']);
  if (interval !== undefined) m.skip(['execution_config', 'file', 'watch_interval'], 'the file is watched for changes, not polled');
  m.rest(['execution_config', 'file'], ['path', 'watch', 'watch_interval']);
  m.rest(['execution_config'], ['file'], 'Switchyard reads the execution config from a file or URL only (execution_config.file.path)');
}

/** Cosmo's shutdown_delay bounds the whole shutdown; Switchyard's is how long listeners keep accepting after SIGTERM. */
const SHUTDOWN_DELAY_DIFFERS =
  "Cosmo's shutdown_delay bounds the whole shutdown, Switchyard's is how long the listeners keep accepting after SIGTERM (readiness already 503); in-flight work is bounded by grace_period";

/** Config default of Cosmo's `cors.allow_headers` (router/pkg/config/config.go). */
const COSMO_CORS_HEADERS = ['Origin', 'Content-Length', 'Content-Type'];
/**
 * Headers Cosmo's router adds to `allow_headers` whatever the file says
 * (router/core/router.go, defaultCorsHeaders), kept where they mean
 * something to Switchyard (Cosmo's own `x-wg-*` headers do not).
 */
const COSMO_ALWAYS_ALLOWED_HEADERS = [
  'Authorization',
  'Graphql-Client-Name',
  'Graphql-Client-Version',
  'Apollographql-Client-Name',
  'Apollographql-Client-Version',
  'Traceparent',
  'Tracestate',
];
/** Methods Cosmo's router always allows. */
const COSMO_ALWAYS_ALLOWED_METHODS = ['GET', 'POST', 'HEAD'];

function unionIgnoringCase(first: readonly string[], second: readonly string[]): string[] {
  const seen = new Set(first.map((item) => item.toLowerCase()));
  return [...first, ...second.filter((item) => !seen.has(item.toLowerCase()))];
}

function migrateCors(m: Migrator): void {
  const cors = ['cors'];
  // Cosmo's CORS is on, with credentials, by default; Switchyard's is off.
  m.put([...cors, 'enabled'], m.get([...cors, 'enabled']) ?? true);
  const credentials = m.get([...cors, 'allow_credentials']) ?? true;
  m.put([...cors, 'allow_credentials'], credentials);
  m.put([...cors, 'allow_origins'], carriedOrigins(m, m.get([...cors, 'allow_origins']), credentials === true));
  // Cosmo widens both lists with its defaults at startup; written out here, so browsers keep sending what they sent.
  const headers = m.get([...cors, 'allow_headers']);
  const written = Array.isArray(headers) ? headers.map(String) : COSMO_CORS_HEADERS;
  m.put([...cors, 'allow_headers'], unionIgnoringCase(written, COSMO_ALWAYS_ALLOWED_HEADERS), [...cors, 'allow_headers']);
  const methods = m.get([...cors, 'allow_methods']);
  const upper = Array.isArray(methods) ? methods.map((method) => String(method).toUpperCase()) : [];
  m.put([...cors, 'allow_methods'], unionIgnoringCase(upper, COSMO_ALWAYS_ALLOWED_METHODS), [...cors, 'allow_methods']);
  m.put([...cors, 'max_age'], durationOf(m.get([...cors, 'max_age'])), [...cors, 'max_age']);
  m.rest(cors, ['enabled', 'allow_credentials', 'allow_origins', 'allow_headers', 'allow_methods', 'max_age']);
}

/**
 * The origins the router will start with: an entry it would refuse (a
 * pattern that lets anyone's site get credentialed answers, say) is listed
 * as not carried with the reason, rather than written into a config that
 * then stops at startup.
 */
function carriedOrigins(m: Migrator, origins: unknown, credentials: boolean): unknown {
  if (!Array.isArray(origins)) return origins;
  const carried: unknown[] = [];
  origins.forEach((origin, index) => {
    const problem = typeof origin === 'string' ? corsOriginProblem(origin, credentials) : undefined;
    if (problem === undefined) carried.push(origin);
    else m.skip(['cors', 'allow_origins', index], problem);
  });
  return carried;
}

const HEADER_RULE_KEYS: Readonly<Record<string, readonly string[]>> = {
  propagate: ['named', 'matching', 'rename', 'default'],
  set: ['name', 'value'],
};

function migrateHeaderRules(m: Migrator, from: Path, to: Path): void {
  const rules = m.get([...from, 'request']);
  if (Array.isArray(rules)) {
    const carried: Doc[] = [];
    rules.forEach((rule: unknown, index) => {
      const at = [...from, 'request', index];
      const op = isMapping(rule) ? rule.op : undefined;
      const keys = typeof op === 'string' ? ownEntry(HEADER_RULE_KEYS, op) : undefined;
      if (!isMapping(rule) || keys === undefined) {
        m.skip(at, `header rule op ${JSON.stringify(op)} has no Switchyard equivalent (propagate, set)`);
        return;
      }
      const extra = Object.keys(rule).filter((key) => key !== 'op' && !keys.includes(key) && rule[key] !== '' && rule[key] !== false && rule[key] !== undefined);
      if (extra.length > 0) {
        m.skip(
          at,
          `${extra.join(', ')} ${extra.length === 1 ? 'is' : 'are'} not supported in header rules (value_from, expression, negate_match, from_file have no equivalent); rule left out`,
        );
        return;
      }
      // Cosmo leaves unused fields as empty strings; Switchyard wants them absent.
      carried.push(Object.fromEntries(Object.entries(rule).filter(([, value]) => value !== '' && value !== undefined)));
    });
    if (carried.length > 0) m.put([...to, 'request'], carried, [...from, 'request']);
  }
  if (m.get([...from, 'response']) !== undefined) m.skip([...from, 'response'], 'response header rules are not supported');
  m.rest(from, ['request', 'response']);
}

function migrateHeaders(m: Migrator): void {
  if (m.get(['headers', 'all']) !== undefined) migrateHeaderRules(m, ['headers', 'all'], ['headers', 'all']);
  const subgraphs = m.get(['headers', 'subgraphs']);
  if (isMapping(subgraphs)) for (const name of Object.keys(subgraphs)) migrateHeaderRules(m, ['headers', 'subgraphs', name], ['headers', 'subgraphs', name]);
  m.rest(['headers'], ['all', 'subgraphs']);
}

function migrateTrafficRule(m: Migrator, from: Path, to: Path, withDefaults: boolean): void {
  const timeout = durationOf(m.get([...from, 'request_timeout']));
  // Cosmo: 60s per subgraph request; Switchyard: 30s.
  m.put([...to, 'request_timeout'], timeout ?? (withDefaults ? '60s' : undefined), [...from, 'request_timeout']);
  const retry = [...from, 'retry'];
  const enabled = m.get([...retry, 'enabled']);
  if (withDefaults || m.get(retry) !== undefined) {
    const retryTo = [...to, 'retry'];
    // Cosmo: on, 5 retries after the first attempt, 3s backoff, 10s at most.
    m.put([...retryTo, 'enabled'], enabled ?? true, [...retry, 'enabled']);
    const retries = m.get([...retry, 'max_attempts']);
    const attempts = (typeof retries === 'number' ? retries : 5) + 1;
    if (attempts > 10) m.skip([...retry, 'max_attempts'], `Switchyard makes at most 10 attempts; ${attempts - 1} retries were asked for (written as 10)`);
    m.put([...retryTo, 'max_attempts'], Math.min(attempts, 10), [...retry, 'max_attempts']);
    m.put([...retryTo, 'interval'], durationOf(m.get([...retry, 'interval'])) ?? '3s', [...retry, 'interval']);
    m.put([...retryTo, 'max_duration'], durationOf(m.get([...retry, 'max_duration'])) ?? '10s', [...retry, 'max_duration']);
    const algorithm = m.get([...retry, 'algorithm']);
    if (algorithm !== undefined && algorithm !== 'backoff_jitter') m.skip([...retry, 'algorithm'], 'only backoff with jitter');
    if (m.get([...retry, 'expression']) !== undefined) m.skip([...retry, 'expression'], 'retries happen on connection errors and 502/503/504; the condition is not configurable');
    m.rest(retry, ['enabled', 'max_attempts', 'interval', 'max_duration', 'algorithm', 'expression']);
  }
  const breaker = [...from, 'circuit_breaker'];
  if (m.get(breaker) !== undefined) {
    if (m.get([...breaker, 'enabled']) === true)
      m.skip(
        breaker,
        "Cosmo's breaker opens on an error percentage over a rolling window; Switchyard's on consecutive failures (traffic_shaping.all.circuit_breaker): set it yourself",
      );
    else m.put([...to, 'circuit_breaker', 'enabled'], false, [...breaker, 'enabled']);
  }
  m.rest(from, ['request_timeout', 'retry', 'circuit_breaker'], 'connection-level timeouts and pool sizes are not configurable');
}

function migrateTrafficShaping(m: Migrator): void {
  migrateTrafficRule(m, ['traffic_shaping', 'all'], ['traffic_shaping', 'all'], true);
  const subgraphs = m.get(['traffic_shaping', 'subgraphs']);
  if (isMapping(subgraphs)) {
    for (const name of Object.keys(subgraphs)) migrateTrafficRule(m, ['traffic_shaping', 'subgraphs', name], ['traffic_shaping', 'subgraphs', name], false);
  }
  // Cosmo accepts request bodies up to 5MB; Switchyard 1MB.
  m.put(['limits', 'max_request_body'], m.get(['traffic_shaping', 'router', 'max_request_body_size']) ?? '5MB', ['traffic_shaping', 'router', 'max_request_body_size']);
  // Same names, same defaults (decoding on, gzip answers from 4KiB): carried only when the file sets them.
  for (const key of ['decompression_enabled', 'response_compression_min_size']) m.put(['traffic_shaping', 'router', key], m.get(['traffic_shaping', 'router', key]));
  m.rest(['traffic_shaping', 'router'], ['max_request_body_size', 'decompression_enabled', 'response_compression_min_size'], 'not configurable');
  m.rest(['traffic_shaping'], ['all', 'subgraphs', 'router']);
}

function migrateEngine(m: Migrator): void {
  m.put(['engine', 'enable_single_flight'], m.get(['engine', 'enable_single_flight']));
  m.put(['engine', 'execution_plan_cache_size'], m.get(['engine', 'execution_plan_cache_size']));
  m.rest(['engine'], ['enable_single_flight', 'execution_plan_cache_size'], "an engine tuning option of Cosmo's Go engine with no Switchyard equivalent");
}

function limitOf(m: Migrator, path: Path): number | undefined {
  const node = m.get(path);
  if (!isMapping(node) || node.enabled !== true) return undefined;
  if (node.ignore_persisted_operations === true) m.skip([...path, 'ignore_persisted_operations'], 'Switchyard applies its limits to persisted operations too');
  return typeof node.limit === 'number' && node.limit > 0 ? node.limit : undefined;
}

/** Cosmo's `complexity_limits` (mode `enforce` by default): the depth and total-fields limits it enforces, each reported where not carried. */
function complexityLimits(m: Migrator): { depth: number | undefined; totalFields: number | undefined } {
  const from = ['security', 'complexity_limits'];
  const mode = m.get([...from, 'mode']);
  const limits = ['depth', 'total_fields', 'root_fields', 'root_field_aliases'];
  if (mode !== undefined && mode !== 'enforce') {
    const enabled = limits.filter((key) => m.get([...from, key, 'enabled']) === true);
    m.skip(
      [...from, 'mode'],
      mode === 'measure'
        ? `Cosmo only measures these limits (it refuses no operation for them); Switchyard has no measuring mode, so ${enabled.length > 0 ? `${enabled.map((key) => `complexity_limits.${key}`).join(', ')} ${enabled.length === 1 ? 'is not written as a limit' : 'are not written as limits'}` : 'nothing is written'}`
        : `unknown mode ${JSON.stringify(mode)} (measure or enforce): complexity_limits not written`,
    );
    m.rest(from, ['mode', ...limits, 'ignore_introspection']);
    return { depth: undefined, totalFields: undefined };
  }
  const depth = limitOf(m, [...from, 'depth']);
  const totalFields = limitOf(m, [...from, 'total_fields']);
  for (const key of ['root_fields', 'root_field_aliases']) {
    if (limitOf(m, [...from, key]) !== undefined) m.skip([...from, key], `no ${key.replace(/_/g, ' ')} limit (limits.max_aliases counts every alias)`);
  }
  if (m.get([...from, 'ignore_introspection']) === true && (depth !== undefined || totalFields !== undefined)) {
    m.skip(
      [...from, 'ignore_introspection'],
      'Switchyard applies limits.max_depth and limits.max_fields to introspection queries too (the standard introspection query nests about 13 deep): raise them if clients introspect',
    );
  }
  m.rest(from, ['mode', ...limits, 'ignore_introspection']);
  return { depth, totalFields };
}

function migrateSecurity(m: Migrator): void {
  const security = ['security'];
  const complexity = complexityLimits(m);
  // Cosmo's parser rejects nesting beyond 200 and more than 3500 fields by default; Switchyard has no depth limit and 5000 fields.
  const approximate = m.get([...security, 'parser_limits', 'approximate_depth_limit']);
  const depths = [limitOf(m, [...security, 'depth_limit']), complexity.depth, typeof approximate === 'number' ? (approximate > 0 ? approximate : undefined) : 200].filter(
    (value): value is number => value !== undefined,
  );
  m.put(['limits', 'max_depth'], depths.length > 0 ? Math.min(...depths) : 0, [...security, 'depth_limit']);
  const totalFields = m.get([...security, 'parser_limits', 'total_fields_limit']);
  const fields = [complexity.totalFields, typeof totalFields === 'number' ? (totalFields > 0 ? totalFields : undefined) : 3500].filter(
    (value): value is number => value !== undefined,
  );
  m.put(['limits', 'max_fields'], fields.length > 0 ? Math.min(...fields) : 0, [...security, 'parser_limits', 'total_fields_limit']);
  m.rest([...security, 'parser_limits'], ['approximate_depth_limit', 'total_fields_limit']);
  for (const key of ['block_mutations', 'block_subscriptions', 'block_persisted_operations']) {
    if (m.get([...security, key, 'enabled']) === true)
      m.skip([...security, key], 'blocking operations by kind is not supported (persisted_operations.safelist refuses unregistered free-form operations)');
  }
  if (m.get([...security, 'block_non_persisted_operations', 'enabled']) === true) {
    // The closest guard, rather than none: a migrated router must not quietly run every operation Cosmo refused.
    m.put(['persisted_operations', 'enabled'], true, [...security, 'block_non_persisted_operations']);
    m.put(['persisted_operations', 'safelist'], true, [...security, 'block_non_persisted_operations']);
    m.skip(
      [...security, 'block_non_persisted_operations'],
      'carried as persisted_operations.safelist: true, which refuses unregistered operations but still runs a registered one sent as text (Cosmo refuses every operation not sent by id)',
    );
  }
  m.rest(security, [
    'depth_limit',
    'complexity_limits',
    'parser_limits',
    'block_mutations',
    'block_subscriptions',
    'block_non_persisted_operations',
    'block_persisted_operations',
    'complexity_calculation_cache',
  ]);
}

function migrateErrorPropagation(m: Migrator): void {
  const from = ['subgraph_error_propagation'];
  // Cosmo's defaults where they differ from Switchyard's: wrapped errors, the service name attached, a default code.
  const defaults: Doc = { mode: 'wrapped', attach_service_name: true, default_extension_code: 'DOWNSTREAM_SERVICE_ERROR' };
  const keys = [
    'enabled',
    'mode',
    'rewrite_paths',
    'omit_locations',
    'omit_extensions',
    'attach_service_name',
    'default_extension_code',
    'allow_all_extension_fields',
    'allowed_extension_fields',
    'allowed_fields',
  ];
  for (const key of keys) m.put([...from, key], m.get([...from, key]) ?? defaults[key], [...from, key]);
  if (m.get([...from, 'propagate_status_codes']) === true) m.skip([...from, 'propagate_status_codes'], 'subgraph status codes are not propagated');
  m.rest(from, [...keys, 'propagate_status_codes']);
}

function providerOf(m: Migrator, id: unknown): { kind: string; provider: Doc } | undefined {
  for (const kind of ['redis', 'file_system', 'cdn', 's3']) {
    const list = m.get(['storage_providers', kind]);
    if (Array.isArray(list)) {
      const provider = list.find((item: unknown) => isMapping(item) && item.id === id);
      if (isMapping(provider)) return { kind, provider };
    }
  }
  return undefined;
}

function migrateStorage(m: Migrator): void {
  const redis = m.get(['storage_providers', 'redis']);
  if (Array.isArray(redis)) {
    m.put(
      ['storage_providers', 'sharedstore'],
      redis.map((item: unknown) => (isMapping(item) ? Object.fromEntries(Object.entries(item).filter(([key]) => ['id', 'urls', 'cluster_enabled'].includes(key))) : item)),
      ['storage_providers', 'redis'],
    );
  }
  for (const kind of ['s3', 'cdn']) {
    if (m.get(['storage_providers', kind]) !== undefined) m.skip(['storage_providers', kind], `no ${kind === 's3' ? 'S3' : 'CDN'} storage provider`);
  }
  m.rest(['storage_providers'], ['redis', 's3', 'cdn', 'file_system']);
}

function migratePersistedOperations(m: Migrator): void {
  const from = ['persisted_operations'];
  if (m.get(from) === undefined) return;
  // Cosmo serves persisted operations unless `disabled`; Switchyard only when enabled.
  // security.block_non_persisted_operations (migrateSecurity) may have switched the safelist on: nothing here turns it off.
  const blocked = m.get(['security', 'block_non_persisted_operations', 'enabled']) === true;
  m.put([...from, 'enabled'], blocked || m.get([...from, 'disabled']) !== true, [...from, 'disabled']);
  m.put([...from, 'log_unknown'], m.get([...from, 'log_unknown']));
  m.put([...from, 'safelist'], blocked || m.get([...from, 'safelist', 'enabled']), [...from, 'safelist', 'enabled']);
  const manifest = [...from, 'manifest'];
  if (m.get(manifest) !== undefined) {
    m.put([...manifest, 'enabled'], m.get([...manifest, 'enabled']));
    m.put([...manifest, 'poll_interval'], durationOf(m.get([...manifest, 'poll_interval'])), [...manifest, 'poll_interval']);
    m.put([...manifest, 'poll_jitter'], durationOf(m.get([...manifest, 'poll_jitter'])), [...manifest, 'poll_jitter']);
    const name = m.get([...manifest, 'file_name']);
    if (name !== undefined && name !== 'manifest.json') m.skip([...manifest, 'file_name'], 'the manifest is always manifest.json');
    if (m.get([...manifest, 'warmup']) !== undefined) m.skip([...manifest, 'warmup'], 'no plan warm-up');
    m.rest(manifest, ['enabled', 'poll_interval', 'poll_jitter', 'file_name', 'warmup']);
  }
  const id = m.get([...from, 'storage', 'provider_id']);
  const tree = "copy the operations into a Switchyard store (Cosmo's CDN tree as it is, or push them with switchyard operations push) and set persisted_operations.storage to it";
  if (id !== undefined) {
    const found = providerOf(m, id);
    m.skip(
      [...from, 'storage'],
      found?.kind === 'file_system'
        ? // router/internal/persistedoperation/operationstorage/fs/client.go: one flat folder, whatever the client.
          `Cosmo's file_system provider ("${String(id)}") reads <path>/${m.get([...from, 'storage', 'object_prefix']) ? '<object_prefix>/' : ''}<sha256>.json for every client; Switchyard's file store reads <path>/<graph>/operations/<client>/<id>.json (docs/persisted-operations.md#layout): ${tree}`
        : `${found ? `${found.kind === 's3' ? 'an' : 'a'} ${found.kind} provider ("${String(id)}")` : `provider "${String(id)}"`} is not readable: ${tree}`,
    );
  } else if (blocked || m.get([...from, 'disabled']) !== true) {
    // Without a provider Cosmo reads its CDN (with the graph token); Switchyard would read an empty local folder.
    m.skip([...from, 'storage'], `not set: Cosmo then reads persisted operations from its CDN, which Switchyard does not; ${tree}`);
  }
  if (m.get([...from, 'cache']) !== undefined) m.skip([...from, 'cache'], 'Cosmo sizes this cache in bytes; Switchyard counts operations (persisted_operations.lookup_cache.size)');
  m.rest(from, ['disabled', 'log_unknown', 'safelist', 'manifest', 'storage', 'cache']);
}

function migrateApq(m: Migrator): void {
  const from = ['automatic_persisted_queries'];
  if (m.get(from) === undefined) return;
  m.put([...from, 'enabled'], m.get([...from, 'enabled']));
  const ttl = m.get([...from, 'cache', 'ttl']);
  if (typeof ttl === 'number' && ttl > 0) m.put([...from, 'cache', 'ttl'], `${ttl}s`, [...from, 'cache', 'ttl']);
  if (m.get([...from, 'cache', 'size']) !== undefined)
    m.skip([...from, 'cache', 'size'], 'Cosmo sizes this cache in bytes; Switchyard counts queries (automatic_persisted_queries.cache.size, default 1000)');
  const id = m.get([...from, 'storage', 'provider_id']);
  if (id !== undefined) {
    const found = providerOf(m, id);
    if (found?.kind === 'redis') m.put([...from, 'storage', 'provider_id'], id, [...from, 'storage', 'provider_id']);
    else
      m.skip([...from, 'storage', 'provider_id'], `APQ storage must be a Redis (sharedstore) provider; "${String(id)}" is ${found ? `a ${found.kind} provider` : 'not defined'}`);
  }
  if (m.get([...from, 'storage', 'object_prefix']) !== undefined) m.skip([...from, 'storage', 'object_prefix'], 'the key prefix is not configurable');
  m.rest(from, ['enabled', 'cache', 'storage']);
  m.rest([...from, 'cache'], ['ttl', 'size']);
}

function migrateResponseCache(m: Migrator): void {
  const section = m.get(['response_cache']);
  if (!isMapping(section)) return;
  const storage = isMapping(section.storage) && section.storage.provider === 'redis' ? { ...section.storage, provider: 'sharedstore' } : section.storage;
  // Copied key by key: a key this build's schema does not know is reported here, at its Cosmo path, not left for validation to refuse.
  const kept = keepKnown(m, storage === undefined ? section : { ...section, storage }, ['response_cache']);
  if (kept !== undefined) m.put(['response_cache'], kept);
}

function migrateMetrics(m: Migrator): void {
  const from = ['telemetry', 'metrics', 'prometheus'];
  // Cosmo serves Prometheus metrics on 127.0.0.1:8088 unless disabled; Switchyard's are off by default.
  m.put(['metrics', 'enabled'], m.get([...from, 'enabled']) ?? true, [...from, 'enabled']);
  m.put(['metrics', 'listen_addr'], cosmoListenAddress(m.get([...from, 'listen_addr'])) ?? '127.0.0.1:8088', [...from, 'listen_addr']);
  m.put(['metrics', 'path'], m.get([...from, 'path']), [...from, 'path']);
  m.rest(from, ['enabled', 'listen_addr', 'path'], 'a Cosmo Prometheus option with no Switchyard equivalent');
  migrateTelemetry(m);
}

/** Cosmo's OpenTelemetry keys have the same names in Switchyard's telemetry plugin (docs/telemetry.md); OTLP/HTTP and OTLP/gRPC exporters. */
function migrateTelemetry(m: Migrator): void {
  m.put(['telemetry', 'service_name'], m.get(['telemetry', 'service_name']));
  const tracing = ['telemetry', 'tracing'];
  for (const key of ['enabled', 'sampling_rate', 'parent_based_sampler']) m.put([...tracing, key], m.get([...tracing, key]));
  migrateExporters(m, tracing, ['batch_timeout']);
  m.rest(tracing, ['enabled', 'sampling_rate', 'parent_based_sampler', 'exporters'], 'a Cosmo tracing option Switchyard does not have');
  const otlp = ['telemetry', 'metrics', 'otlp'];
  m.put([...otlp, 'enabled'], m.get([...otlp, 'enabled']));
  migrateExporters(m, otlp, []);
  m.rest(otlp, ['enabled', 'exporters'], 'a Cosmo OTLP metrics option Switchyard does not have');
  m.rest(['telemetry', 'metrics'], ['prometheus', 'otlp'], 'no Switchyard equivalent');
  m.rest(['telemetry'], ['service_name', 'tracing', 'metrics'], 'no Switchyard equivalent');
  const accessLogs = ['access_logs'];
  // Cosmo writes an access log line per request unless told not to; Switchyard's are off by default.
  const accessLogsOn = m.get([...accessLogs, 'enabled']) ?? true;
  m.put([...accessLogs, 'enabled'], accessLogsOn, [...accessLogs, 'enabled']);
  // Cosmo's access log has a level of its own; Switchyard's lines go through the router log at info.
  const level = m.config.log_level;
  if (accessLogsOn === true && typeof level === 'string' && !['debug', 'info', 'trace'].includes(level)) {
    m.skip(
      [...accessLogs, 'enabled'],
      `written as true, but Switchyard writes access lines through the router log at info, which log_level: ${level} leaves out; set log_level: info to keep them`,
    );
  }
  m.rest(accessLogs, ['enabled'], 'access log lines are fixed JSON lines through the router log (docs/telemetry.md)');
}

function migrateExporters(m: Migrator, from: Path, extra: readonly string[]): void {
  const exporters = m.get([...from, 'exporters']);
  if (!Array.isArray(exporters)) return;
  let index = 0;
  exporters.forEach((exporter: unknown, i) => {
    const at = [...from, 'exporters', i];
    if (!isMapping(exporter)) return m.skip(at, 'not an exporter mapping');
    if (exporter.exporter !== undefined && exporter.exporter !== 'http' && exporter.exporter !== 'grpc') {
      return m.skip(at, 'only OTLP exporters (exporter: http or grpc)');
    }
    // Cosmo ignores `path` for gRPC (a warning at startup), and so would the router: it is left out.
    const carried = exporter.exporter === 'grpc' ? ['disabled', 'exporter', 'endpoint', 'headers', ...extra] : ['disabled', 'exporter', 'endpoint', 'path', 'headers', ...extra];
    const to = [...from, 'exporters', index++];
    // Written even with nothing in it: `{}` is an exporter with every default, as in Cosmo (a hole in the list would be refused).
    m.put(to, {}, at);
    for (const key of [...carried, 'export_timeout']) {
      const value = key.endsWith('_timeout') ? durationOf(exporter[key]) : exporter[key];
      m.put([...to, key], value, [...at, key]);
    }
    m.rest(at, ['disabled', 'exporter', 'endpoint', 'path', 'headers', 'export_timeout', ...extra], 'an exporter option Switchyard does not have');
  });
}

function migrateConnect(m: Migrator): void {
  const from = ['connect_rpc'];
  if (m.get(from) === undefined) return;
  m.put([...from, 'enabled'], m.get([...from, 'enabled']));
  m.put([...from, 'server', 'listen_addr'], cosmoListenAddress(m.get([...from, 'server', 'listen_addr'])));
  m.put([...from, 'server', 'base_url'], m.get([...from, 'server', 'base_url']));
  m.rest([...from, 'server'], ['listen_addr', 'base_url']);
  const id = m.get([...from, 'storage', 'provider_id']);
  if (id !== undefined) {
    const found = providerOf(m, id);
    const path = found?.kind === 'file_system' ? found.provider.path : undefined;
    if (typeof path === 'string') m.put([...from, 'services', 'path'], path, [...from, 'storage', 'provider_id']);
    else
      m.skip([...from, 'storage', 'provider_id'], `the services folder must be a file_system provider; "${String(id)}" is ${found ? `a ${found.kind} provider` : 'not defined'}`);
  }
  if (m.get([...from, 'graphql_endpoint']) !== undefined) m.skip([...from, 'graphql_endpoint'], 'Connect calls run in the router itself, not against a GraphQL endpoint');
  m.rest(from, ['enabled', 'server', 'storage', 'graphql_endpoint']);
}

/**
 * `authentication` and `authorization` have Cosmo's shape here, so every key
 * this build's schema knows is copied as it is; the rest is reported. A key
 * set's `audiences` is Switchyard's `audience` (the check must not be lost).
 */
function migrateAuth(m: Migrator): void {
  for (const section of ['authentication', 'authorization']) {
    const value = section === 'authentication' ? withAudience(m.get([section])) : m.get([section]);
    const kept = keepKnown(m, value, [section]);
    if (kept !== undefined) m.put([section], kept);
  }
}

/** A copy of Cosmo's `authentication` section with each `jwt.jwks[]` entry's `audiences` renamed `audience`. */
function withAudience(section: unknown): unknown {
  const jwks = isMapping(section) && isMapping(section.jwt) ? section.jwt.jwks : undefined;
  if (!Array.isArray(jwks) || !jwks.some((entry) => isMapping(entry) && Object.hasOwn(entry, 'audiences'))) return section;
  const renamed = jwks.map((entry) => {
    if (!isMapping(entry) || !Object.hasOwn(entry, 'audiences')) return entry;
    const { audiences, ...rest } = entry;
    // An empty list checks nothing in Cosmo, as no `audience` does here.
    return Array.isArray(audiences) && audiences.length === 0 ? rest : { ...rest, audience: audiences };
  });
  return { ...(section as Doc), jwt: { ...((section as Doc).jwt as Doc), jwks: renamed } };
}

function keepKnown(m: Migrator, value: unknown, path: Path): unknown {
  if (value === undefined) return undefined;
  if (!schemaAccepts(path)) {
    m.skip(path, ownEntry(NO_EQUIVALENT, String(path.at(-1))) ?? 'no Switchyard equivalent');
    return undefined;
  }
  if (Array.isArray(value)) return value.map((item, index) => keepKnown(m, item, [...path, index])).filter((item) => item !== undefined);
  if (!isMapping(value)) return value;
  const out: Doc = {};
  for (const [key, item] of Object.entries(value)) {
    const kept = keepKnown(m, item, [...path, key]);
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}

function migratePyroscope(m: Migrator): void {
  const from = ['pyroscope'];
  if (m.get(from) === undefined) return;
  const to = ['profiler'];
  m.put([...to, 'enabled'], m.get([...from, 'enabled']), [...from, 'enabled']);
  m.put([...to, 'server_address'], m.get([...from, 'server_address']), [...from, 'server_address']);
  // Cosmo's default name; Switchyard's is io.switchyard.router.
  m.put([...to, 'application_name'], m.get([...from, 'application_name']) ?? 'wundergraph.cosmo.router', [...from, 'application_name']);
  m.put([...to, 'basic_auth', 'username'], m.get([...from, 'basic_auth', 'username']) || undefined, [...from, 'basic_auth', 'username']);
  m.put([...to, 'basic_auth', 'password'], m.get([...from, 'basic_auth', 'password']) || undefined, [...from, 'basic_auth', 'password']);
  m.put([...to, 'tags'], m.get([...from, 'tags']), [...from, 'tags']);
  m.put([...to, 'upload_interval'], durationOf(m.get([...from, 'upload_rate'])), [...from, 'upload_rate']);
  m.rest(
    from,
    ['enabled', 'server_address', 'application_name', 'basic_auth', 'tags', 'upload_rate'],
    "a Pyroscope option Switchyard's profiler does not have (it pushes CPU and heap profiles)",
  );
}

const SECTIONS = new Set([
  'version',
  'log_level',
  'listen_addr',
  'playground',
  'playground_enabled',
  'introspection',
  'introspection_enabled',
  'query_plans_enabled',
  'graph',
  'execution_config',
  'router_config_path',
  'cors',
  'headers',
  'traffic_shaping',
  'engine',
  'security',
  'subgraph_error_propagation',
  'storage_providers',
  'persisted_operations',
  'automatic_persisted_queries',
  'response_cache',
  'telemetry',
  'access_logs',
  'connect_rpc',
  'pyroscope',
  'authentication',
  'authorization',
]);

/** Top-level keys whose Cosmo value is a single value; every other section is a mapping. */
const VALUE_SECTIONS = new Set(['version', 'log_level', 'listen_addr', 'playground_enabled', 'introspection_enabled', 'query_plans_enabled', 'router_config_path']);

/** Converts a parsed Cosmo router config into a Switchyard one, listing what it could not carry. */
export function migrateCosmoConfig(source: Doc): Migration {
  const m = new Migrator(source);
  // A section that is not a mapping (`cors: 5`) has no keys to carry: said once, rather than vanishing.
  for (const key of SECTIONS) {
    const value = source[key];
    if (VALUE_SECTIONS.has(key) || !Object.hasOwn(source, key) || value === null || isMapping(value)) continue;
    m.skip([key], `expected a mapping of keys, not ${Array.isArray(value) ? 'a list' : JSON.stringify(value).slice(0, 40)}`);
  }
  migrateTop(m);
  migrateExecutionConfig(m);
  migrateCors(m);
  migrateHeaders(m);
  migrateTrafficShaping(m);
  migrateEngine(m);
  migrateSecurity(m);
  migrateErrorPropagation(m);
  migrateStorage(m);
  migratePersistedOperations(m);
  migrateApq(m);
  migrateResponseCache(m);
  migrateMetrics(m);
  migrateConnect(m);
  migratePyroscope(m);
  migrateAuth(m);
  for (const key of Object.keys(source)) {
    if (SECTIONS.has(key)) continue;
    const fixed = Object.hasOwn(FIXED, key);
    if (fixed && source[key] === FIXED[key]) continue;
    if (fixed) m.skip([key], `not configurable: Switchyard always uses ${JSON.stringify(FIXED[key])}`);
    else if (key === 'grace_period' && schemaAccepts([key])) m.put([key], durationOf(source[key]), [key]);
    else if (key === 'shutdown_delay') m.skip([key], SHUTDOWN_DELAY_DIFFERS);
    else m.skip([key], ownEntry(NO_EQUIVALENT, key) ?? 'no Switchyard equivalent');
  }
  return { config: m.config, notCarried: m.notCarried };
}

type Segment = string | number;

/** `storage_providers.sharedstore[1].urls` as segments; the inverse of `formatKeyPath`. */
function segmentsOf(path: string): Segment[] {
  const segments: Segment[] = [];
  for (const match of path.matchAll(/\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?([^.[\]]+)/g)) {
    if (match[1] !== undefined) segments.push(Number(match[1]));
    else if (match[2] !== undefined) segments.push(JSON.parse(match[2]) as string);
    else if (match[3] !== undefined) segments.push(match[3]);
  }
  return segments;
}

function nodeAt(config: Doc, path: readonly Segment[]): unknown {
  let node: unknown = config;
  for (const segment of path) {
    if ((!isMapping(node) && !Array.isArray(node)) || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<Segment, unknown>)[segment];
  }
  return node;
}

/** Switchyard keys written under another name than Cosmo's, same shape below (a report names the Cosmo key). */
const COSMO_NAMES: ReadonlyArray<readonly [readonly string[], readonly string[]]> = [
  [
    ['storage_providers', 'sharedstore'],
    ['storage_providers', 'redis'],
  ],
];

function cosmoPath(path: readonly Segment[]): string {
  for (const [switchyard, cosmo] of COSMO_NAMES) {
    if (switchyard.every((segment, i) => path[i] === segment)) return formatKeyPath([...cosmo, ...path.slice(switchyard.length)]);
  }
  return formatKeyPath(path);
}

const startsWith = (path: readonly Segment[], prefix: readonly Segment[]): boolean => prefix.length <= path.length && prefix.every((segment, i) => path[i] === segment);
const sameKey = (a: readonly Segment[], b: readonly Segment[]): boolean => a.length === b.length && startsWith(a, b);

/** The converted config could not be made one the router accepts, or only by leaving it open: nothing is written. */
export class MigrationInvalid extends Error {
  /** Why nothing is written, and each problem (`<key path>: <message>`): the CLI prints them one line each. */
  readonly lead: string;
  readonly issues: readonly string[];
  constructor(issues: readonly string[], lead = 'the converted config is still invalid, so it is not written (please report this)') {
    super(`${lead}:\n${issues.map((issue) => `  ${issue}`).join('\n')}`);
    this.name = 'MigrationInvalid';
    this.lead = lead;
    this.issues = issues;
  }
}

/** The JWKS entries of a converted config (Cosmo's authentication providers), 0 when there is no authentication. */
function jwksCount(config: Doc): number {
  const jwks = nodeAt(config, ['authentication', 'jwt', 'jwks']);
  return Array.isArray(jwks) ? jwks.length : 0;
}

/** A reported problem: where (original coordinates), why, and what was taken out for it. */
interface Report {
  readonly path: Segment[];
  readonly message: string;
  cut: Segment[];
}

/** Reports by the path of what was taken out for them (original coordinates), to find those under a path without scanning all. */
interface CutNode {
  readonly children: Map<Segment, CutNode>;
  reports: Report[];
}

/** Every report in the subtree of `node`, which is left holding none below it. */
function takeReports(node: CutNode, taken: Report[] = []): Report[] {
  for (const report of node.reports) taken.push(report);
  for (const child of node.children.values()) takeReports(child, taken);
  node.children.clear();
  node.reports = [];
  return taken;
}

/** `path` as a Map key: numbers and strings kept apart (`[0]` is not `["0"]`). */
const keyOf = (path: readonly Segment[]): string => JSON.stringify(path);

/**
 * The key an `unknown key "<key>"` problem names, when `parent` has it: the
 * problem's path is the mapping holding the key, and only the key is to go.
 */
function unknownKey(message: string, parent: unknown): string | undefined {
  const prefix = 'unknown key "';
  if (!message.startsWith(prefix) || !isMapping(parent)) return undefined;
  let found: string | undefined;
  // The key may itself hold quotes: the longest own key of `parent` the message names.
  for (let end = message.indexOf('"', prefix.length); end !== -1; end = message.indexOf('"', end + 1)) {
    const key = message.slice(prefix.length, end);
    const after = message.slice(end + 1);
    if ((after === '' || after.startsWith(' (')) && Object.hasOwn(parent, key)) found = key;
  }
  return found;
}

/**
 * Validates the result as the router would. A value Switchyard refuses is left
 * out (an unknown key: that key alone); where a required key is refused or
 * missing, the entry holding it goes (and, when that empties a list or
 * section the router needs, the list or section too). Each problem is
 * reported once, at its path in the Cosmo file. Throws `MigrationInvalid`
 * when the config cannot be made valid.
 */
export function validated(migration: Migration): Migration {
  const sections = builtinSections.map(({ key, schema, plugin }) => ({ key, schema, plugin }));
  const config = migration.config;
  /** Original indexes of the items taken out of each list so far, ascending, by the list's path before any removal. */
  const removed = new Map<string, number[]>();
  const reports: Report[] = [];
  const cutTree: CutNode = { children: new Map(), reports: [] };
  /** Path and message of every report, so a problem is reported once. */
  const reported = new Set<string>();
  // Translates a path in the config as it is now to the path it had before any removal (list items shift up).
  const original = (path: readonly Segment[]): Segment[] => {
    const out: Segment[] = [];
    for (const segment of path) {
      const gone = typeof segment === 'number' ? removed.get(keyOf(out)) : undefined;
      out.push(typeof segment === 'number' && gone !== undefined ? originalIndex(segment, gone) : segment);
    }
    return out;
  };
  const providers = jwksCount(config);
  // Each round removes at least one key, so the rounds are bounded by the config's size.
  for (;;) {
    let issues: ReadonlyArray<{ path: string; message: string }>;
    try {
      parseConfig(config, { env: {}, sections });
      break;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues = error.issues;
    }
    const cuts: Array<{ now: Segment[]; was: Segment[] }> = [];
    const cutKeys = new Set<string>();
    for (const issue of issues) {
      let at = segmentsOf(issue.path);
      // An unknown key is reported at the mapping holding it: that key alone goes, not the mapping.
      const key = unknownKey(issue.message, nodeAt(config, at));
      if (key !== undefined) at = [...at, key];
      // A missing key cannot be taken out: the entry that lacks it is.
      let now = at;
      while (now.length > 0 && nodeAt(config, now) === undefined) now = now.slice(0, -1);
      if (now.length === 0) throw new MigrationInvalid(issues.map((each) => `${each.path || '(the file)'}: ${each.message}`));
      const was = original(now);
      const issuePath = original(at);
      // A list or section emptied by an earlier removal: the same problem, which now takes out more.
      let node: CutNode | undefined = cutTree;
      for (const segment of was) node = node?.children.get(segment);
      const earlier = node === undefined ? [] : takeReports(node);
      if (node !== undefined && earlier.length > 0) {
        for (const report of earlier) report.cut = was;
        node.reports = earlier;
      } else if (!reported.has(keyOf([...issuePath, issue.message]))) {
        reported.add(keyOf([...issuePath, issue.message]));
        const report: Report = { path: issuePath, message: issue.message, cut: was };
        reports.push(report);
        // An unknown key means nothing to Switchyard: what its removal leaves refused is a problem of its own, reported as such.
        if (key === undefined) {
          let holder = cutTree;
          for (const segment of was) {
            let child = holder.children.get(segment);
            if (child === undefined) holder.children.set(segment, (child = { children: new Map(), reports: [] }));
            holder = child;
          }
          holder.reports.push(report);
        }
      }
      if (!cutKeys.has(keyOf(now))) {
        cutKeys.add(keyOf(now));
        cuts.push({ now, was });
      }
    }
    let changed = false;
    const touched = new Set<number[]>();
    /** List items to take out, by list: taken out together once every cut is found, so no index moves before. */
    const dropped = new Map<unknown[], Set<number>>();
    for (const { now, was } of cuts) {
      const parent = nodeAt(config, now.slice(0, -1));
      const last = now.at(-1)!;
      if (Array.isArray(parent) && typeof last === 'number' && last < parent.length) {
        const drop = dropped.get(parent) ?? new Set<number>();
        dropped.set(parent, drop.add(last));
        const list = keyOf(was.slice(0, -1));
        const gone = removed.get(list) ?? [];
        if (gone.length === 0) removed.set(list, gone);
        gone.push(was.at(-1) as number);
        touched.add(gone);
        changed = true;
      } else if (isMapping(parent) && Object.hasOwn(parent, String(last))) {
        delete parent[String(last)];
        changed = true;
      }
    }
    for (const [list, drop] of dropped) {
      let kept = 0;
      for (let index = 0; index < list.length; index++) if (!drop.has(index)) list[kept++] = list[index];
      list.length = kept;
    }
    for (const gone of touched) gone.sort((a, b) => a - b);
    // Nothing left to take out, yet still refused: never write such a config.
    if (!changed) throw new MigrationInvalid(issues.map((each) => `${each.path || '(the file)'}: ${each.message}`));
  }
  // Cosmo verified tokens here; a config that lets every request in instead is not written (fail closed).
  if (providers > 0 && jwksCount(config) === 0) {
    throw new MigrationInvalid(
      reports.filter((report) => report.path[0] === 'authentication').map((report) => `${cosmoPath(report.path)}: ${report.message}`),
      'authentication: none of the Cosmo authentication providers could be carried, and a config without them would let every request in, so it is not written; fix or replace the providers (Switchyard verifies JWTs from JWKS URLs) and run again',
    );
  }
  for (const { path, message, cut } of reports) {
    const cutText = sameKey(cut, path) ? '' : ` (${cosmoPath(cut)} left out)`;
    migration.notCarried.push({ path: cosmoPath(path), why: `Switchyard refuses the converted value: ${message}${cutText}` });
  }
  return migration;
}

/** The index the `index`th remaining item of a list had before the items at `gone` (ascending) were taken out. */
function originalIndex(index: number, gone: readonly number[]): number {
  // The smallest original index with `index + 1` items kept up to it: kept(o) = o + 1 - (removed at or before o).
  let low = index;
  let high = index + gone.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (middle + 1 - countAtMost(gone, middle) >= index + 1) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** How many of `sorted` (ascending) are at most `value`. */
function countAtMost(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle]! <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}
