import type { CoreConfig, Logger } from '../../../src/index.js';
import type { ResolvedResponseCacheOptions } from '../options.js';
import { BreakerCacheStore, type BreakerState } from './breaker-store.js';
import type { CacheStore } from './cache-store.js';
import { DeadlineCacheStore } from './deadline-store.js';
import { findSharedStore } from './find-shared-store.js';
import { MemoryCacheStore } from './memory-store.js';
import type { RedisStoreOptions } from './redis-store.js';
import { TieredCacheStore } from './tiered-store.js';

/** Without the breaker: how long one request-path store operation may take before the request goes on without the cache. */
const REDIS_COMMAND_MS = 1000;

/** `response_cache.memory_tier`, `max_size` in bytes. */
export type MemoryTierSettings = ResolvedResponseCacheOptions['memory_tier'];

/** `response_cache.circuit_breaker`, durations in ms. */
export type BreakerOptions = ResolvedResponseCacheOptions['circuit_breaker'];

/**
 * Opens the store `response_cache.storage` names: memory at once, or the
 * declared shared store (its client is loaded only then). An unknown
 * `provider_id` stops startup.
 */
export async function openStore(
  storage: NonNullable<ResolvedResponseCacheOptions['storage']>,
  keyPrefix: string,
  config: CoreConfig,
  log: Logger,
  markTtlMs: number,
  breaker?: BreakerOptions,
  memoryTier?: MemoryTierSettings,
  onBreakerState?: (state: BreakerState) => void,
  unreadable?: RedisStoreOptions['unreadable'],
): Promise<CacheStore> {
  if (storage.provider === 'memory') return new MemoryCacheStore({ maxEntries: storage.max_entries, maxBytes: storage.max_size, markTtlMs });
  const provider = findSharedStore(config, storage.provider_id);
  const [{ connectRedis }, { RedisCacheStore }] = await Promise.all([import('./redis-connection.js'), import('./redis-store.js')]);
  const commandMs = breaker?.enabled ? breaker.timeout : REDIS_COMMAND_MS;
  const keepIndexes = memoryTier?.enabled === true;
  const redis = new RedisCacheStore(await connectRedis(provider, log, { commandMs }), { keyPrefix, markTtlMs, keepIndexes, unreadable });
  const guarded = breaker?.enabled
    ? new BreakerCacheStore(redis, { failureThreshold: breaker.failure_threshold, coolDownMs: breaker.cool_down, timeoutMs: breaker.timeout }, log, onBreakerState)
    : new DeadlineCacheStore(redis, REDIS_COMMAND_MS);
  if (!memoryTier?.enabled) return guarded;
  return new TieredCacheStore(guarded, { maxBytes: memoryTier.max_size, maxEntries: memoryTier.max_entries, markTtlMs });
}
