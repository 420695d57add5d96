import { byteSize, duration, hostPort, z } from '../../src/index.js';

/** Shortest `invalidation.endpoint.shared_key` accepted. */
export const MIN_SHARED_KEY_LENGTH = 32;

const flag = (value: boolean) => z.boolean().default(value);

const storageSchema = z.strictObject({
  /** `sharedstore` (Redis 7.0+, shared by replicas) or `memory` (per replica). Default: `sharedstore`. */
  provider: z.enum(['sharedstore', 'memory']).default('sharedstore'),
  /** Id of a `storage_providers.sharedstore[]` item; required unless `provider` is `memory`. Default: none. */
  provider_id: z.string().min(1).optional(),
  /** Memory provider only: entries kept; the least recently used is evicted beyond. Default: `10000`. */
  max_entries: z.int().min(1).default(10_000),
  /**
   * Memory provider only: approximate bytes kept (keys plus the answers' JSON), the least recently used evicted beyond.
   * Clients choose the variables, so they choose how large each answer is: a count alone bounds nothing. Default: `128MB`.
   */
  max_size: byteSize({ min: 1024 }).prefault('128MB'),
});

const endpointSchema = z.strictObject({
  /** Serve the invalidation endpoint (only while the cache is enabled). Default: `false`. */
  enabled: flag(false),
  /** Address of its own plain-HTTP listener, `host:port`. Default: `localhost:5027`. */
  listen_addr: hostPort({ allowPortZero: true }).default('localhost:5027'),
  /** Path of the endpoint. Default: `/invalidation`. */
  path: z.string().startsWith('/').default('/invalidation'),
  /** Value clients send as the `Authorization` header (no `Bearer`); 32+ characters when enabled. Default: empty. */
  shared_key: z.string().default(''),
});

const invalidationSchema = z.strictObject({
  /** Index entries by the cache tags subgraphs declare (invalidation kind `cache_tag`). Default: `true`. */
  cache_tag: flag(true),
  /** Index entries by the subgraph that answered (kind `subgraph`). Default: `true`. */
  subgraph: flag(true),
  /** Index entities by subgraph and `__typename` (kind `type`). Default: `true`. */
  type: flag(true),
  /**
   * Drop an entry whose fetch started before an invalidation of one of its
   * indexes and whose write lands after it (the write-during-invalidation
   * race). Default: `true`.
   */
  guard_concurrent_writes: flag(true),
  /** The HTTP invalidation endpoint. */
  endpoint: endpointSchema.prefault({}),
  /**
   * Replicas sharing a Redis apply each other's invalidations: the replica
   * that accepts one publishes it on Redis pub/sub, every other applies it to
   * its memory-provider cache. docs/response-cache.md
   */
  broadcast: z
    .strictObject({
      /** Publish and receive invalidations. Default: `false`. */
      enabled: flag(false),
      /** Id of the `storage_providers.sharedstore[]` item carrying them; required when enabled. Default: none. */
      provider_id: z.string().min(1).optional(),
    })
    .prefault({}),
});

/** Schema of `response_cache` (and of `useResponseCache` options). */
export const responseCacheOptionsSchema = z
  .strictObject({
    /** Cache subgraph responses. Default: `false`. */
    enabled: flag(false),
    /** Lifetime for a response with a caching directive but no lifetime; at least 1s. Default: `30s`. */
    fallback_ttl: duration({ min: '1s', timer: false }).prefault('30s'),
    /** Prepended to every shared-store key (ignored by the memory provider). Default: `router_response_cache:`. */
    key_prefix: z.string().default('router_response_cache:'),
    /** Where entries live; required when `enabled`. Default: none. */
    storage: storageSchema.optional(),
    /** A batch with some entities cached fetches only the missing ones. Default: `true`. */
    fetch_missing_entities_only: flag(true),
    /** Indexes kept for invalidation, and the invalidation endpoint. */
    invalidation: invalidationSchema.prefault({}),
    /**
     * A breaker around the shared store: after `failure_threshold` failed or
     * timed-out operations in a row, no Redis call is made for `cool_down`
     * (requests go to the subgraphs); then one probe decides. docs/response-cache.md
     */
    circuit_breaker: z
      .strictObject({
        /** Open the breaker after repeated failures (sharedstore only). Default: `true`. */
        enabled: flag(true),
        /** Failed or timed-out store operations in a row that open it. Default: `5`. */
        failure_threshold: z.int().min(1).default(5),
        /** How long it stays open before one probe is let through. Default: `10s`. */
        cool_down: duration({ min: '100ms' }).prefault('10s'),
        /** Longest wait for one request-path store operation; longer counts as a failure. Default: `1s`. */
        timeout: duration({ min: '10ms' }).prefault('1s'),
      })
      .prefault({}),
    /**
     * A client's `Cache-Control: no-cache` (or `Pragma: no-cache`) skips the
     * cache reads of its request and refreshes the entries fetched.
     */
    client_control: z
      .strictObject({
        /** Honour the client's no-cache request headers. Default: `false`. */
        enabled: flag(false),
        /**
         * When set (32+ characters), only requests carrying it in
         * `X-Switchyard-Cache-Refresh-Key` may refresh; a wrong key gets 400.
         * Empty: every client may (development). Default: empty.
         */
        shared_key: z.string().default(''),
      })
      .prefault({}),
    /**
     * Read and write the cache but always answer from the subgraphs,
     * comparing each hit with the fresh answer (metrics, sampled log line).
     */
    shadow_mode: z
      .strictObject({
        /** Never serve from the cache; count hit/fresh mismatches. Default: `false`. */
        enabled: flag(false),
      })
      .prefault({}),
    /**
     * Per-user entries: a subgraph answer marked `private` is stored for the
     * request's user alone, keyed by a hash of the value that identifies
     * them, and never served to anyone else. Without it `private` answers
     * are not stored. Exactly one of `user_header` and `user_claim` when
     * enabled. docs/response-cache.md
     */
    private_entries: z
      .strictObject({
        /** Store `private` answers per user. Default: `false`. */
        enabled: flag(false),
        /** Client request header whose value identifies the user (case-insensitive name). Default: none. */
        user_header: z
          .string()
          .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name')
          .transform((name) => name.toLowerCase())
          .optional(),
        /** Claim of the token `authentication` verified whose value identifies the user (for example `sub`). Default: none. */
        user_claim: z.string().min(1).optional(),
      })
      .prefault({}),
    /** With `storage.provider: sharedstore`: an in-process tier in front of Redis. */
    memory_tier: z
      .strictObject({
        /** Keep entries in process too; a hit there makes no Redis call. Default: `false`. */
        enabled: flag(false),
        /** Bytes of entries kept (approximate: their JSON length), least recently used evicted beyond. Default: `64MB`. */
        max_size: byteSize({ min: 1024 }).prefault('64MB'),
        /** Entries kept, least recently used evicted beyond. Default: `10000`. */
        max_entries: z.int().min(1).default(10_000),
      })
      .prefault({}),
    /** Debugging aids. */
    debug: z
      .strictObject({
        /** Honour the `X-Switchyard-Cache-Debug: true` request header (adds `extensions.responseCache`). Default: `false`. */
        enabled: flag(false),
      })
      .prefault({}),
  })
  .superRefine(function checkResponseCacheOptions(options, ctx) {
    if (options.enabled && options.storage === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['storage'],
        message: 'is required when enabled is true; set storage.provider: memory, or sharedstore with storage.provider_id',
        input: undefined,
      });
    }
    if (options.storage && options.storage.provider === 'sharedstore' && options.storage.provider_id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['storage', 'provider_id'],
        message: 'is required for provider sharedstore: the id of a storage_providers.sharedstore item',
        input: undefined,
      });
    }
    if (options.memory_tier.enabled && options.storage && options.storage.provider !== 'sharedstore') {
      ctx.addIssue({
        code: 'custom',
        path: ['memory_tier', 'enabled'],
        message: 'needs storage.provider: sharedstore (the memory provider is in process already)',
        input: undefined,
      });
    }
    const refreshKey = options.client_control.shared_key;
    if (refreshKey !== '' && refreshKey.length < MIN_SHARED_KEY_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        path: ['client_control', 'shared_key'],
        message: `must be empty or at least ${MIN_SHARED_KEY_LENGTH} characters (it has ${refreshKey.length})`,
        input: undefined,
      });
    }
    const privateEntries = options.private_entries;
    if (privateEntries.enabled && (privateEntries.user_header === undefined) === (privateEntries.user_claim === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['private_entries'],
        message: 'needs exactly one of user_header and user_claim when enabled: the request value that identifies the user',
        input: undefined,
      });
    }
    const broadcast = options.invalidation.broadcast;
    if (broadcast.enabled && broadcast.provider_id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['invalidation', 'broadcast', 'provider_id'],
        message: 'is required when broadcast is enabled: the id of a storage_providers.sharedstore item',
        input: undefined,
      });
    }
    const endpoint = options.invalidation.endpoint;
    // With the cache off the endpoint is not started (one warning), so its key is not needed either.
    if (options.enabled && endpoint.enabled && endpoint.shared_key.length < MIN_SHARED_KEY_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        path: ['invalidation', 'endpoint', 'shared_key'],
        // The key itself is a secret: never repeat it.
        message: `must be at least ${MIN_SHARED_KEY_LENGTH} characters when the endpoint is enabled (it has ${endpoint.shared_key.length})`,
        input: undefined,
      });
    }
  });

/** `response_cache` as written in the file or passed in code. */
export type ResponseCacheOptions = z.input<typeof responseCacheOptionsSchema>;
/** `response_cache` with defaults filled in (`fallback_ttl` in ms). */
export type ResolvedResponseCacheOptions = z.output<typeof responseCacheOptionsSchema>;
/** Which indexes are kept. */
export type IndexSwitches = Pick<ResolvedResponseCacheOptions['invalidation'], 'cache_tag' | 'subgraph' | 'type'>;
