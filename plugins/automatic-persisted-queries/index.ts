/**
 * `automatic-persisted-queries`: Apollo's APQ protocol over a bounded
 * in-memory cache (at most `cache.size` queries and APQ_CACHE_BYTES of text;
 * a text refused with a 400 is not kept). Works alone or beside
 * `persisted-operations` (either may resolve a hash; an unknown hash is
 * answered once). With `storage.provider_id`, texts are also kept in Redis
 * (shared-store.ts), behind the in-process cache. docs/persisted-operations.md
 */
import { LRUCache } from 'lru-cache';
import { ConfigError, definePlugin } from '../../src/index.js';
import { APQ_SHARED_DEFAULT_TTL_MS, automaticPersistedQueriesConfigSchema, automaticPersistedQueriesSection } from './config.js';
import { APQ_CACHE_BYTES, APQ_ENTRY_BYTES, automaticPersistedQueriesHook, queryBytes } from './request-hook.js';
import type { ApqSharedStore } from './shared-store.js';

export {
  automaticPersistedQueriesConfigSchema,
  type AutomaticPersistedQueriesConfig,
  type AutomaticPersistedQueriesConfigInput,
} from './config.js';

/** `useAutomaticPersistedQueries(options)`: options as the `automatic_persisted_queries` section. */
export const useAutomaticPersistedQueries = definePlugin({
  name: 'automatic-persisted-queries',
  config: automaticPersistedQueriesSection,
  options: automaticPersistedQueriesConfigSchema,
  async setup(ctx, options) {
    if (!options.enabled) return {};
    const cache = new LRUCache<string, string>({
      max: options.cache.size,
      maxSize: APQ_CACHE_BYTES,
      maxEntrySize: APQ_ENTRY_BYTES,
      sizeCalculation: queryBytes,
      ...(options.cache.ttl === undefined ? {} : { ttl: options.cache.ttl }),
    });
    const providerId = options.storage.provider_id;
    let shared: ApqSharedStore | undefined;
    if (providerId !== undefined) {
      const declared = ctx.config.storage_providers.sharedstore;
      const provider = declared.find((item) => item.id === providerId);
      if (!provider) {
        const known = declared.length === 0 ? 'none are declared' : `declared: ${declared.map((item) => item.id).join(', ')}`;
        throw new ConfigError([
          {
            path: 'automatic_persisted_queries.storage.provider_id',
            plugin: 'automatic-persisted-queries',
            message: `"${providerId}" is not in storage_providers.sharedstore (${known})`,
          },
        ]);
      }
      // The Redis client is loaded only when a shared store is asked for.
      const { openApqSharedStore } = await import('./shared-store.js');
      shared = openApqSharedStore(provider, options.cache.ttl ?? APQ_SHARED_DEFAULT_TTL_MS, ctx.log);
    }
    ctx.log.info(
      {
        cache_size: options.cache.size,
        cache_ttl: options.cache.ttl ?? null,
        storage_provider_id: providerId ?? null,
        ...(shared ? { storage_ttl: options.cache.ttl ?? APQ_SHARED_DEFAULT_TTL_MS } : {}),
      },
      'Automatic persisted queries enabled',
    );
    const requests = ctx.metrics.counter('automatic_persisted_queries_requests_total', 'Automatic persisted queries, by result', ['result']);
    return {
      hooks: { onRequest: automaticPersistedQueriesHook(cache, requests, shared) },
      stop: async () => {
        cache.clear();
        await shared?.close();
      },
    };
  },
});
