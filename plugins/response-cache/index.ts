/**
 * `response-cache` (experimental, alpha): caches subgraph answers at the
 * fetch stage, in memory or in Redis 7+, and serves the invalidation
 * endpoint. Config key `response_cache`; needs `cache-tags` registered
 * before it (the config file does this).
 *
 * ```ts
 * import { useCacheTags } from 'switchyard/plugins/cache-tags';
 * import { useResponseCache } from 'switchyard/plugins/response-cache';
 * await createRouter({
 *   plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } })],
 * });
 * ```
 */
import { definePlugin } from '../../src/index.js';
import { responseCacheSection } from './config.js';
import { responseCacheOptionsSchema } from './options.js';

export {
  MIN_SHARED_KEY_LENGTH,
  responseCacheOptionsSchema,
  type IndexSwitches,
  type ResolvedResponseCacheOptions,
  type ResponseCacheOptions,
} from './options.js';
export { decideCaching, parseCacheControl, type CachePolicy } from './cache-control.js';
export { mergeCacheControl, type AnswerPart } from './client-cache-control.js';
export { CACHE_KEY_VERSION } from './cache-key.js';
export { DEGRADED_MESSAGE } from './degraded.js';
export { SHADOW_MISMATCH_MESSAGE } from './shadow.js';
export { CACHE_DEBUG_HEADER } from './respond-hook.js';
export { RESPONSE_CACHE, ResponseCacheRecord, type FetchCacheStatus } from './request-record.js';
export { checkStoreVersion, MIN_STORE_VERSION, type VersionCheck } from './store/store-version.js';
export { STORED_VALUE_FORMAT } from './store/stored-value.js';
export { UNREADABLE_ENTRY_MESSAGE } from './unreadable-entries.js';

/** Caches subgraph responses; see `docs/response-cache.md`. Disabled (`enabled: false`) it costs nothing. */
export const useResponseCache = definePlugin({
  name: 'response-cache',
  config: responseCacheSection,
  options: responseCacheOptionsSchema,
  dependsOn: ['cache-tags'],
  // private_entries.user_claim reads the identity the authentication plugin verified.
  optionalDependsOn: ['authentication'],
  async setup(ctx, options) {
    if (!options.enabled) {
      if (options.invalidation.endpoint.enabled) {
        ctx.log.warn('Invalidation endpoint not started: response_cache.enabled is false');
      }
      return;
    }
    // The cache's modules (keyv, the Redis client) load only when it is enabled.
    const { startResponseCache } = await import('./start-cache.js');
    return startResponseCache(ctx, options);
  },
});
