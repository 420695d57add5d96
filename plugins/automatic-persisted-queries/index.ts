/**
 * `automatic-persisted-queries`: Apollo's APQ protocol over a bounded
 * in-memory cache (at most `cache.size` queries and APQ_CACHE_BYTES of text;
 * a text refused with a 400 is not kept). Works alone or beside
 * `persisted-operations` (either may resolve a hash; an unknown hash is
 * answered once). docs/persisted-operations.md
 */
import { LRUCache } from 'lru-cache';
import { definePlugin } from '../../src/index.js';
import { automaticPersistedQueriesConfigSchema } from './config.js';
import { APQ_CACHE_BYTES, APQ_ENTRY_BYTES, automaticPersistedQueriesHook, queryBytes } from './request-hook.js';

export {
  automaticPersistedQueriesConfigSchema,
  type AutomaticPersistedQueriesConfig,
  type AutomaticPersistedQueriesConfigInput,
} from './config.js';

/** `useAutomaticPersistedQueries(options)`: options as the `automatic_persisted_queries` section. */
export const useAutomaticPersistedQueries = definePlugin({
  name: 'automatic-persisted-queries',
  configKey: 'automatic_persisted_queries',
  options: automaticPersistedQueriesConfigSchema,
  setup(ctx, options) {
    if (!options.enabled) return {};
    const cache = new LRUCache<string, string>({
      max: options.cache.size,
      maxSize: APQ_CACHE_BYTES,
      maxEntrySize: APQ_ENTRY_BYTES,
      sizeCalculation: queryBytes,
      ...(options.cache.ttl === undefined ? {} : { ttl: options.cache.ttl }),
    });
    ctx.log.info({ cache_size: options.cache.size, cache_ttl: options.cache.ttl ?? null }, 'Automatic persisted queries enabled');
    const requests = ctx.metrics.counter('automatic_persisted_queries_requests_total', 'Automatic persisted queries, by result', ['result']);
    return {
      hooks: { onRequest: automaticPersistedQueriesHook(cache, requests) },
      stop: () => cache.clear(),
    };
  },
});
