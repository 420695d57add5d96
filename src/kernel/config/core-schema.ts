/**
 * Schema of the core keys of `router.config.yaml` (INTERFACES.md, "Config").
 * Every object is strict: an unknown key stops startup with its path.
 * Plugin sections are merged in by `buildConfigSchema` (load-config.ts).
 */

import { headerNamePattern } from './header-name-pattern.js';
import { byteSize, describeValue, duration, hostPort, url, z } from './schema-helpers.js';

/** Log levels of `log_level` (pino's, plus `silent`). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** HTTP methods accepted in `cors.allow_methods`. */
export const CORS_METHODS = ['GET', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** A `cors.allow_methods` value. */
export type CorsMethod = (typeof CORS_METHODS)[number];

const nonEmpty = (): z.ZodString => z.string().min(1);
const flag = (value: boolean) => z.boolean().default(value);
const count = (value: number) => z.int().min(0).default(value);
/** An HTTP header name (an RFC 9110 token): anything else would break the header line it is sent in. */
const headerName = (): z.ZodString =>
  z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, {
    error: (issue) => `must be an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~); got ${describeValue(issue.input)}`,
  });

/** Rules that name one header or match many. Exactly one of `named` / `matching`. */
function oneHeaderSelector(rule: { named?: string | undefined; matching?: string | undefined }, ctx: z.core.$RefinementCtx): void {
  if ((rule.named === undefined) === (rule.matching === undefined)) {
    ctx.addIssue({ code: 'custom', message: 'set exactly one of "named" or "matching"', input: rule });
  }
}

const propagateRule = z
  .strictObject({
    /** Copies client request headers to subgraph requests. */
    op: z.literal('propagate'),
    /** Exact header name (case-insensitive). One of `named` / `matching`. */
    named: nonEmpty().optional(),
    /** Regular expression matched against header names. One of `named` / `matching`. */
    matching: headerNamePattern().optional(),
    /** Value sent when the client did not send the header. Default: none (nothing sent). */
    default: z.string().optional(),
    /** Name the header is sent under to the subgraph. Default: its own name. */
    rename: nonEmpty().optional(),
  })
  .superRefine(oneHeaderSelector);

const setRule = z.strictObject({
  /** Sets a fixed header on subgraph requests. */
  op: z.literal('set'),
  /** Header name. */
  name: nonEmpty(),
  /** Header value. */
  value: z.string(),
});

const removeRule = z
  .strictObject({
    /** Removes headers from subgraph requests (after propagation). */
    op: z.literal('remove'),
    /** Exact header name (case-insensitive). One of `named` / `matching`. */
    named: nonEmpty().optional(),
    /** Regular expression matched against header names. One of `named` / `matching`. */
    matching: headerNamePattern().optional(),
  })
  .superRefine(oneHeaderSelector);

/** One rule of `headers.*.request[]`, told apart by `op`. */
export const headerRuleSchema = z.discriminatedUnion('op', [propagateRule, setRule, removeRule]);

const headerRuleList = z.strictObject({
  /** Rules applied, in order, to requests sent to subgraphs. Default: `[]`. */
  request: z.array(headerRuleSchema).default(() => []),
});

const sharedStoreProvider = z.strictObject({
  /** Name other sections refer to (`response_cache.storage.provider_id`). Unique. */
  id: nonEmpty(),
  /** Connect as a Redis Cluster client. Default: `false`. */
  cluster_enabled: flag(false),
  /** Store URLs, `redis://` or `rediss://`; at least one (cluster: seed nodes). */
  urls: z.array(url({ protocols: ['redis:', 'rediss:'] })).min(1),
});

const fileSystemProvider = z.strictObject({
  /** Name other sections refer to (`connect_rpc.storage.provider_id`). Unique. */
  id: nonEmpty(),
  /** Folder, relative to the working directory. */
  path: nonEmpty(),
});

function uniqueIds(providers: ReadonlyArray<{ id: string }>, ctx: z.core.$RefinementCtx): void {
  const firstIndex = new Map<string, number>();
  providers.forEach((provider, index) => {
    const first = firstIndex.get(provider.id);
    if (first === undefined) firstIndex.set(provider.id, index);
    else ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `duplicate id "${provider.id}" (also used by item ${first})`, input: provider.id });
  });
}

const retryPolicy = z.strictObject({
  /** Retry subgraph queries that failed to connect or got 502/503/504. Default: `true`. */
  enabled: flag(true),
  /** Attempts in all, the first included. Default: `3`. */
  max_attempts: z.int().min(1).max(10).default(3),
  /** Wait before the first retry, doubled after each (with jitter), in ms. Default: `50ms`. */
  interval: duration({ min: '1ms' }).prefault('50ms'),
  /** No retry starts later than this after the first attempt, in ms. Default: `2s`. */
  max_duration: duration({ min: '1ms' }).prefault('2s'),
});

const circuitBreakerPolicy = z.strictObject({
  /** Open the circuit after repeated failures: requests fail fast with `SUBGRAPH_CIRCUIT_OPEN`. Default: `false`. */
  enabled: flag(false),
  /** Consecutive failed requests that open it. Default: `5`. */
  failure_threshold: z.int().min(1).default(5),
  /** How long it stays open before one trial request may pass, in ms. Default: `10s`. */
  cooldown: duration({ min: '1ms' }).prefault('10s'),
});

/** The core keys of `router.config.yaml`, as a zod shape (plugin sections are added beside them). */
export const coreConfigShape = {
  /** Config format version. Required, the string `"1"`. */
  version: z.literal('1', {
    error: (issue) =>
      issue.input === undefined ? 'is required; start the file with version: "1"' : issue.input === 1 ? 'must be the string "1"; quote it: version: "1"' : 'must be "1"',
  }),
  /** Address of the GraphQL listener, `host:port`. Default: `localhost:3002`. */
  listen_addr: hostPort({ allowPortZero: true }).default('localhost:3002'),
  /** Log level. Default: `info`. */
  log_level: z.enum(LOG_LEVELS).default('info'),
  /**
   * After SIGTERM: how long the listeners keep accepting connections while
   * `/health/ready` already answers 503 (time for a load balancer to take the
   * replica out). Default: `0s` (the listener still reads requests already on
   * the wire for 250 ms).
   */
  shutdown_delay: duration().prefault('0s'),
  /**
   * After the listeners close: how long in-flight requests may take to finish
   * before their connections are cut. Default: `30s`.
   */
  grace_period: duration().prefault('30s'),
  /** Where the graph comes from. Default: `{ file: { watch: true } }`. */
  execution_config: z
    .strictObject({
      /** The execution config file. */
      file: z
        .strictObject({
          /** Execution config JSON or supergraph SDL (`.graphql`). Default: none (the CLI's `--supergraph`). */
          path: nonEmpty().optional(),
          /** Reload when the file changes; a bad file keeps the previous graph. Default: `true`. */
          watch: flag(true),
        })
        .prefault({}),
    })
    .prefault({}),
  /** The federated graph this router serves. Default: `{ name: "default" }`. */
  graph: z
    .strictObject({
      /** Federated graph name (persisted operations are stored per graph). Default: `default`. */
      name: nonEmpty().default('default'),
    })
    .prefault({}),
  /** GraphiQL playground. Default: `{ enabled: true }`. */
  playground: z
    .strictObject({
      /** Serve GraphiQL at `GET /`. Default: `true`. */
      enabled: flag(true),
    })
    .prefault({}),
  /** Introspection queries. Default: `{ enabled: true }`. */
  introspection: z
    .strictObject({
      /** Answer introspection queries. Default: `true`. */
      enabled: flag(true),
    })
    .prefault({}),
  /** GraphQL subscriptions over WebSocket on `/graphql` (docs/subscriptions.md). */
  subscriptions: z
    .strictObject({
      /** Serve `Subscription` fields when the graph has them. Default: `true`. */
      enabled: flag(true),
      /** Most active subscriptions on one WebSocket connection; more are answered with an error. Default: `100`. */
      max_per_connection: count(100),
      /** Most active subscriptions on this process; more are answered with an error. Default: `10000`. */
      max_total: count(10_000),
      /** Most data queued for one client (a WebSocket connection, an SSE or multipart response) that reads too slowly, before it is dropped; `0B` = no limit. Default: `4MiB`. */
      max_queued_bytes: byteSize().prefault('4MiB'),
    })
    .prefault({}),
  /** Request limits. Default: body 1MB, other limits off. */
  limits: z
    .strictObject({
      /** Largest accepted request body (413 beyond), `1MB` = 1,000,000 bytes. Default: `1MB`. */
      max_request_body: byteSize({ min: 1 }).prefault('1MB'),
      /** Deepest selection nesting accepted; 0 = no limit. Default: `0`. */
      max_depth: count(0),
      /** Most aliases in one operation; 0 = no limit. Default: `0`. */
      max_aliases: count(0),
      /** Most lexical tokens in one document; 0 = no limit. Default: `0`. */
      max_tokens: count(0),
      /** Most operations in one batched request; 0 = batching off. Default: `0`. */
      max_batch_size: count(0),
      /** Most fields in one operation after fragment expansion; 0 = no limit. Default: `5000`. */
      max_fields: count(5000),
    })
    .prefault({}),
  /** Refusal of cross-site requests a browser sends without a preflight. Default: on. */
  csrf_prevention: z
    .strictObject({
      /** Refuse simple cross-site POSTs (form, multipart, text/plain, no content type) without a required header. Default: `true`. */
      enabled: flag(true),
      /** Headers of which one lets such a request through. Default: `[graphql-preflight, apollo-require-preflight, x-apollo-operation-name]`. */
      required_headers: z
        .array(nonEmpty())
        .min(1)
        .default(() => ['graphql-preflight', 'apollo-require-preflight', 'x-apollo-operation-name']),
    })
    .prefault({}),
  /** Query plans in answers (`X-Switchyard-Include-Query-Plan`). Default: as `introspection.enabled`. */
  query_plans: z
    .strictObject({
      /** Honour `X-Switchyard-Include-Query-Plan: true`. Default: the value of `introspection.enabled`. */
      enabled: z.boolean().optional(),
    })
    .prefault({}),
  /** What of a subgraph's errors reaches clients, in Cosmo's shape. Default: message, path and `extensions.code`. */
  subgraph_error_propagation: z
    .strictObject({
      /** Forward subgraph errors at all; off: one generic error per failed fetch. Default: `true`. */
      enabled: flag(true),
      /** `pass-through`: each subgraph error as a client error; `wrapped`: one error per fetch with the subgraph's errors in `extensions.errors`. Default: `pass-through`. */
      mode: z.enum(['pass-through', 'wrapped']).default('pass-through'),
      /** Rewrite subgraph error paths (`_entities`) to the client's response paths. Default: `true`. */
      rewrite_paths: flag(true),
      /** Drop `locations` (they point into the subgraph's document, not the client's). Default: `true`. */
      omit_locations: flag(true),
      /** Drop every `extensions` field. Default: `false`. */
      omit_extensions: flag(false),
      /** Add `extensions.serviceName` with the subgraph's name. Default: `false`. */
      attach_service_name: flag(false),
      /** `extensions.code` given to a subgraph error that has none; empty = none. Default: empty. */
      default_extension_code: z.string().default(''),
      /** Forward every `extensions` field. Default: `false`. */
      allow_all_extension_fields: flag(false),
      /** `extensions` fields forwarded. Default: `[code]`. */
      allowed_extension_fields: z.array(nonEmpty()).default(() => ['code']),
      /** Error fields forwarded beside `message`, `path`, `locations` and `extensions`. Default: `[]`. */
      allowed_fields: z.array(nonEmpty()).default(() => []),
    })
    .prefault({}),
  /** Header rules for subgraph requests, in Cosmo's shape. Default: no rules. */
  headers: z
    .strictObject({
      /** Rules for requests to every subgraph. Default: no rules. */
      all: headerRuleList.prefault({}),
      /** Rules for requests to one subgraph, by subgraph name; run after `all`. Default: `{}`. */
      subgraphs: z.record(nonEmpty(), headerRuleList).default(() => ({})),
    })
    .prefault({}),
  /** CORS on the GraphQL listener. Default: off. */
  cors: z
    .strictObject({
      /** Answer CORS preflights and add CORS headers. Default: `false`. */
      enabled: flag(false),
      /** Allowed origins; `*` allows any. Default: `["*"]`. */
      allow_origins: z.array(nonEmpty()).default(() => ['*']),
      /** Allowed methods. Default: `["GET", "POST", "HEAD"]`. */
      allow_methods: z.array(z.enum(CORS_METHODS)).default((): CorsMethod[] => ['GET', 'POST', 'HEAD']),
      /** Allowed request headers. Default: `["Origin", "Content-Length", "Content-Type"]`. */
      allow_headers: z.array(headerName()).default(() => ['Origin', 'Content-Length', 'Content-Type']),
      /** Allow cookies and authorization headers. Default: `false`. */
      allow_credentials: flag(false),
      /** How long browsers may cache a preflight answer, in ms. Default: `5m`. */
      max_age: duration({ timer: false }).prefault('5m'),
    })
    .prefault({}),
  /** Subgraph request timeouts (30s), and how client request and response bodies are encoded (Cosmo's `router` keys). */
  traffic_shaping: z
    .strictObject({
      /** Client-facing bodies on `/graphql`, under Cosmo's names. */
      router: z
        .strictObject({
          /** Decode request bodies sent with `Content-Encoding: gzip`, `deflate` or `br` (else 415). Default: `true`. */
          decompression_enabled: flag(true),
          /** Compress answers with gzip for clients whose `Accept-Encoding` takes it. Default: `true`. */
          response_compression_enabled: flag(true),
          /** Answers smaller than this are sent uncompressed. Default: `4KiB`. */
          response_compression_min_size: byteSize().prefault('4KiB'),
        })
        .prefault({}),
      /** Rules for every subgraph. */
      all: z
        .strictObject({
          /** Deadline of one subgraph request, in ms. Default: `30s`. */
          request_timeout: duration({ min: '1ms' }).prefault('30s'),
          /** Largest subgraph response body read, in bytes; a larger one is `SUBGRAPH_INVALID_RESPONSE`. Default: `64MiB`. */
          max_response_body: byteSize({ min: 1 }).prefault('64MiB'),
          /** Retries of failed subgraph queries (never mutations). Default: on, 3 attempts. */
          retry: retryPolicy.prefault({}),
          /** Fails fast while a subgraph keeps failing. Default: off. */
          circuit_breaker: circuitBreakerPolicy.prefault({}),
        })
        .prefault({}),
      /** Per-subgraph overrides, by subgraph name. Default: `{}`. */
      subgraphs: z
        .record(
          nonEmpty(),
          z.strictObject({
            /** Deadline of one request to this subgraph, in ms. Default: `traffic_shaping.all.request_timeout`. */
            request_timeout: duration({ min: '1ms' }).optional(),
            /** Largest response body read from this subgraph, in bytes. Default: `traffic_shaping.all.max_response_body`. */
            max_response_body: byteSize({ min: 1 }).optional(),
            /** Replaces `traffic_shaping.all.retry` for this subgraph. */
            retry: retryPolicy.optional(),
            /** Replaces `traffic_shaping.all.circuit_breaker` for this subgraph. */
            circuit_breaker: circuitBreakerPolicy.optional(),
          }),
        )
        .default(() => ({})),
    })
    .prefault({}),
  /** Planner and fetch behaviour. Default: single flight on, multi fetch off, 1024 plans. */
  engine: z
    .strictObject({
      /** Share identical in-flight subgraph query fetches. Default: `true`. */
      enable_single_flight: flag(true),
      /** Merge entity fetches to one subgraph in one parallel wave (merged fetches are not cached). Default: `false`. */
      enable_multi_fetch: flag(false),
      /** Query plans kept (LRU). Default: `1024`. */
      execution_plan_cache_size: z.int().min(1).default(1024),
    })
    .prefault({}),
  /** Prometheus metrics listener. Default: off, `localhost:8088`, `/metrics`. */
  metrics: z
    .strictObject({
      /** Serve Prometheus metrics. Default: `false`. */
      enabled: flag(false),
      /** Address of the metrics listener. Default: `localhost:8088`. */
      listen_addr: hostPort({ allowPortZero: true }).default('localhost:8088'),
      /** Path of the metrics endpoint. Default: `/metrics`. */
      path: z.string().startsWith('/').default('/metrics'),
    })
    .prefault({}),
  /** Stores other sections refer to by id. Default: none. */
  storage_providers: z
    .strictObject({
      /** Shared stores (Redis 7+), referred to by `id`. Default: `[]`. */
      sharedstore: z
        .array(sharedStoreProvider)
        .superRefine(uniqueIds)
        .default(() => []),
      /** Folders on disk, referred to by `id` (Cosmo's name; `connect_rpc.storage.provider_id`). Default: none. */
      file_system: z.array(fileSystemProvider).superRefine(uniqueIds).optional(),
    })
    .prefault({}),
  /** Third-party plugins `{package, options}`, loaded in order; file only (no environment). Default: `[]`. */
  plugins: z
    .array(
      z.strictObject({
        /** npm package name or path of the plugin module. */
        package: nonEmpty(),
        /** Options, validated by the plugin's own schema. Default: none. */
        options: z.unknown().optional(),
      }),
    )
    .default(() => []),
};

/** Schema of the core config alone (no plugin sections). */
export const coreConfigSchema = z.strictObject(coreConfigShape);

/** The core config as the router uses it: defaults filled in, durations in ms, sizes in bytes. */
export type CoreConfig = z.output<typeof coreConfigSchema>;
/** The core config as written in a file or in code: every key with a default may be left out. */
export type CoreConfigInput = z.input<typeof coreConfigSchema>;
/** One header rule (`propagate`, `set` or `remove`). */
export type HeaderRule = z.output<typeof headerRuleSchema>;
/** `headers` with defaults filled in. */
export type HeadersConfig = CoreConfig['headers'];
/** `cors` with defaults filled in. */
export type CorsConfig = CoreConfig['cors'];
/** `csrf_prevention` with defaults filled in. */
export type CsrfPreventionConfig = CoreConfig['csrf_prevention'];
/** `subgraph_error_propagation` with defaults filled in. */
export type SubgraphErrorPropagationConfig = CoreConfig['subgraph_error_propagation'];
/** `limits` with defaults filled in. */
export type LimitsConfig = CoreConfig['limits'];
/** A retry policy with defaults filled in. */
export type RetryPolicy = z.output<typeof retryPolicy>;
/** A circuit breaker policy with defaults filled in. */
export type CircuitBreakerPolicy = z.output<typeof circuitBreakerPolicy>;
/** `traffic_shaping` with defaults filled in. */
export type TrafficShapingConfig = CoreConfig['traffic_shaping'];
/** `engine` with defaults filled in. */
export type EngineConfig = CoreConfig['engine'];
/** `metrics` with defaults filled in. */
export type MetricsConfig = CoreConfig['metrics'];
/** One `storage_providers.sharedstore[]` item. */
export type SharedStoreProviderConfig = z.output<typeof sharedStoreProvider>;
/** One `plugins[]` item. */
export type PluginEntryConfig = CoreConfig['plugins'][number];
/** A `log_level` value. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Whether `X-Switchyard-Include-Query-Plan` is honoured: `query_plans.enabled`, else `introspection.enabled`. */
export function queryPlansEnabled(config: Pick<CoreConfig, 'query_plans' | 'introspection'>): boolean {
  return config.query_plans.enabled ?? config.introspection.enabled;
}
