import { ConfigError, formatDuration, type CoreConfig, type PluginContext, type PluginInstance } from '../../src/index.js';
import { CacheKeys } from './cache-key.js';
import { CacheMetrics } from './cache-metrics.js';
import { CacheSavings } from './cache-savings.js';
import { ClientControl } from './client-control.js';
import { Degradation } from './degraded.js';
import { FetchEpochs } from './fetch-epochs.js';
import { createFetchHook } from './fetch-hook.js';
import { HitMemo } from './hit-memo.js';
import type { InvalidationBroadcast } from './invalidation-broadcast.js';
import { startInvalidationEndpoint, type InvalidationEndpoint } from './invalidation-endpoint.js';
import type { ResolvedResponseCacheOptions } from './options.js';
import { PrivateEntries } from './private-entries.js';
import { finishResponse, requestHook } from './respond-hook.js';
import { ShadowMode } from './shadow.js';
import type { CacheStore } from './store/cache-store.js';
import { MemoryCacheStore } from './store/memory-store.js';
import { openStore } from './store/open-store.js';
import { TieredCacheStore } from './store/tiered-store.js';
import { UnreadableEntries } from './unreadable-entries.js';

/** Bus topic carrying invalidated index names to the other workers. */
const INVALIDATE_TOPIC = 'response-cache:invalidate';

/** Headroom over the longest subgraph timeout for a fetch's answer to be written. */
const WRITE_SLACK_MS = 60_000;

/**
 * Starts an enabled response cache: opens the store, starts the
 * invalidation endpoint if asked, logs `Response cache enabled`, and
 * returns the hooks. Whatever it opened is closed again if a later step fails.
 */
export async function startResponseCache(ctx: PluginContext, options: ResolvedResponseCacheOptions): Promise<PluginInstance> {
  const storage = options.storage;
  if (!storage) throw new Error('storage is required when the response cache is enabled');
  const longestFetchMs = longestSubgraphTimeout(ctx.config) + WRITE_SLACK_MS;
  const metrics = new CacheMetrics(ctx.metrics);
  const unreadable = new UnreadableEntries(ctx.log, metrics);
  const store = await openStore(
    storage,
    options.key_prefix,
    ctx.config,
    ctx.log,
    longestFetchMs,
    options.circuit_breaker,
    options.memory_tier,
    (state) => metrics.breakerState(state),
    (key, kind, reason) => unreadable.report(key, kind, reason),
  );
  // What this process keeps by itself, and must drop when another worker or replica invalidates.
  const local = inProcessPart(store);
  const degradation = new Degradation(ctx.log, metrics);
  const keys = new CacheKeys(storage.provider === 'memory' ? '' : options.key_prefix);
  const switches = options.invalidation;
  ctx.log.info(
    {
      fallback_ttl: formatDuration(options.fallback_ttl),
      storage_provider: storage.provider,
      ...(storage.provider === 'memory'
        ? { max_entries: storage.max_entries, max_size_bytes: storage.max_size }
        : { key_prefix: options.key_prefix, storage_provider_id: storage.provider_id }),
    },
    'Response cache enabled',
  );
  if (store instanceof TieredCacheStore) {
    ctx.log.info({ max_size_bytes: options.memory_tier.max_size, max_entries: options.memory_tier.max_entries }, 'Response cache memory tier enabled');
  }
  if (options.shadow_mode.enabled) ctx.log.info('Response cache shadow mode: hits are compared with the subgraph answers, never served');
  const applyRemote = (indexes: string[]) =>
    local?.invalidate(indexes).then(
      (removed) => metrics.invalidated(removed.flatMap((key) => keys.describe(key) ?? [])),
      (error: unknown) => degradation.report(error, 'invalidate'),
    );
  // Returned, so the publishing worker's 202 waits until this worker's copies are gone.
  const unsubscribe = ctx.cluster.subscribe(INVALIDATE_TOPIC, async (indexes) => {
    if (!Array.isArray(indexes)) return;
    await applyRemote(indexes.filter((index): index is string => typeof index === 'string'));
  });
  // Between replicas (memory provider, memory tier): a shared store alone already shows every replica the same entries.
  let broadcast: InvalidationBroadcast | undefined;
  const broadcastSettings = options.invalidation.broadcast;
  if (broadcastSettings.enabled && local) {
    const memory = local;
    const declared = ctx.config.storage_providers.sharedstore;
    const provider = declared.find((item) => item.id === broadcastSettings.provider_id);
    const problem = !provider
      ? `"${broadcastSettings.provider_id}" is not in storage_providers.sharedstore (${declared.length === 0 ? 'none are declared' : `declared: ${declared.map((item) => item.id).join(', ')}`})`
      : undefined;
    if (problem || !provider) {
      unsubscribe();
      await store.close();
      throw new ConfigError([{ path: 'response_cache.invalidation.broadcast.provider_id', plugin: 'response-cache', message: problem ?? 'unknown' }]);
    }
    // The Redis client is loaded only when the broadcast is on.
    const { openInvalidationBroadcast } = await import('./invalidation-broadcast.js');
    broadcast = openInvalidationBroadcast(provider, `${options.key_prefix}invalidations`, ctx.log, {
      invalidate: (indexes) => void applyRemote(indexes),
      resync: () => memory.clear(),
    });
  } else if (broadcastSettings.enabled) {
    ctx.log.info('response_cache.invalidation.broadcast has nothing to do with the sharedstore provider: every replica reads the same store');
  } else if (store instanceof TieredCacheStore) {
    ctx.log.warn(
      'response_cache.memory_tier without invalidation.broadcast: an invalidation clears the memory tier of the replica that receives it only; other replicas keep theirs until the entries expire',
    );
  }
  let endpoint: InvalidationEndpoint | undefined;
  if (options.invalidation.endpoint.enabled) {
    const settings = options.invalidation.endpoint;
    try {
      endpoint = await startInvalidationEndpoint({
        listenAddr: settings.listen_addr,
        path: settings.path,
        sharedKey: settings.shared_key,
        switches,
        subgraphs: () => {
          const graph = ctx.router.graph;
          return graph ? new Set(graph.subgraphs.keys()) : undefined;
        },
        definesType(subgraph, type) {
          const defined = ctx.router.graph?.supergraph.types.get(type);
          // A type no `@join__type` assigns belongs to every subgraph.
          return defined !== undefined && (defined.subgraphs.size === 0 || defined.subgraphs.has(subgraph));
        },
        async invalidate(indexes) {
          // Memory caches are per process: under `--workers` the other workers drop theirs too, and other
          // replicas through the broadcast (Redis down: local only, warned).
          let told: Promise<unknown> | undefined;
          const tell = () => {
            told = Promise.all([local ? ctx.cluster.publish(INVALIDATE_TOPIC, indexes) : undefined, broadcast?.publish(indexes)]);
          };
          // With the memory tier the others are told once Redis is cleared (whether that worked or not): told
          // earlier, one of them could read the old entry back from Redis into its memory tier.
          const tellAfter = store instanceof TieredCacheStore;
          if (!tellAfter) tell();
          try {
            const removed = await (tellAfter ? store.invalidate(indexes).finally(tell) : store.invalidate(indexes));
            degradation.succeeded();
            metrics.invalidated(removed.flatMap((key) => keys.describe(key) ?? []));
            // The 202 waits until the other workers dropped their copies and Redis has taken the message for the
            // other replicas (never rejects; at most the bus's and the publish timeouts): a client told "done" then
            // asks another worker or replica no sooner than the message reaches it.
            await told;
            return removed.length;
          } catch (error) {
            degradation.report(error, 'invalidate');
            throw error;
          }
        },
        log: ctx.log,
      });
    } catch (error) {
      unsubscribe();
      await broadcast?.close();
      await store.close();
      throw error;
    }
  }
  const privateEntries = privateEntriesOf(options.private_entries);
  if (privateEntries) ctx.log.info({ user_from: 'header' in privateEntries.source ? 'header' : 'claim' }, 'Response cache stores private answers per user');
  const onFetch = createFetchHook({
    store,
    keys,
    memo: new HitMemo(keys),
    metrics,
    degradation,
    epochs: options.invalidation.guard_concurrent_writes ? new FetchEpochs(() => store.epoch(), longestFetchMs) : undefined,
    switches,
    fallbackTtlMs: options.fallback_ttl,
    fetchMissingEntitiesOnly: options.fetch_missing_entities_only,
    log: ctx.log,
    shadow: options.shadow_mode.enabled ? new ShadowMode(ctx.metrics, ctx.log) : undefined,
    privateEntries,
    savings: new CacheSavings(ctx.metrics),
  });
  const onRequest = requestHook({
    debug: options.debug.enabled,
    clientControl: options.client_control.enabled ? new ClientControl(options.client_control.shared_key) : undefined,
    privateEntries,
  });
  return {
    hooks: onRequest ? { onRequest, onFetch, onRespond: finishResponse } : { onFetch, onRespond: finishResponse },
    async stop() {
      unsubscribe();
      await endpoint?.close();
      await broadcast?.close();
      await store.close();
    },
  };
}

/** The in-process part of a store, which other workers' and replicas' invalidations must reach: none for Redis alone. */
function inProcessPart(store: CacheStore): { invalidate(indexes: string[]): Promise<string[]>; clear(): number } | undefined {
  if (store instanceof MemoryCacheStore) return { invalidate: (indexes) => store.invalidate(indexes), clear: () => store.clear() };
  if (store instanceof TieredCacheStore) {
    // Redis was cleared by the replica that received the invalidation; only the memory tier is left (not counted again).
    return {
      invalidate: async (indexes) => {
        store.invalidateMemory(indexes);
        return [];
      },
      clear: () => store.clearMemory(),
    };
  }
  return undefined;
}

/** `private_entries` when enabled (the schema ensured exactly one source). */
function privateEntriesOf(settings: ResolvedResponseCacheOptions['private_entries']): PrivateEntries | undefined {
  if (!settings.enabled) return undefined;
  if (settings.user_header !== undefined) return new PrivateEntries({ header: settings.user_header });
  return settings.user_claim === undefined ? undefined : new PrivateEntries({ claim: settings.user_claim });
}

function longestSubgraphTimeout(config: CoreConfig): number {
  const overrides = Object.values(config.traffic_shaping.subgraphs).map((rules) => rules.request_timeout ?? 0);
  return Math.max(config.traffic_shaping.all.request_timeout, ...overrides);
}
