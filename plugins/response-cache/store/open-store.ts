import type { CoreConfig, Logger } from '../../../src/index.js';
import type { ResolvedResponseCacheOptions } from '../options.js';
import type { CacheStore } from './cache-store.js';
import { DeadlineCacheStore } from './deadline-store.js';
import { findSharedStore } from './find-shared-store.js';
import { MemoryCacheStore } from './memory-store.js';

/** How long one request-path store operation may take before the request goes on without the cache. */
const REDIS_COMMAND_MS = 1000;

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
): Promise<CacheStore> {
  if (storage.provider === 'memory') return new MemoryCacheStore({ maxEntries: storage.max_entries, markTtlMs });
  const provider = findSharedStore(config, storage.provider_id);
  const [{ connectRedis }, { RedisCacheStore }] = await Promise.all([import('./redis-connection.js'), import('./redis-store.js')]);
  return new DeadlineCacheStore(new RedisCacheStore(await connectRedis(provider, log, { commandMs: REDIS_COMMAND_MS }), { keyPrefix, markTtlMs }), REDIS_COMMAND_MS);
}
