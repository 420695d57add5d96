/**
 * `cache-tags`: reads the cache tags subgraphs declare in their response
 * `extensions` (`cacheTags` for root fetches, `entityCacheTags` for entity
 * fetches) into typed request state. The response cache indexes entries by
 * them; any plugin can read them through `CACHE_TAGS`. Subgraph extensions
 * never reach clients, so the tags stay between the subgraph and the router.
 *
 * ```ts
 * import { useCacheTags, CACHE_TAGS } from 'switchyard/plugins/cache-tags';
 * createRouter({ plugins: [useCacheTags(), myPlugin] });
 * // in myPlugin's onFetch after-hook:
 * const tags = after.state.get(CACHE_TAGS)?.of(after.input);
 * ```
 */
import { definePlugin, z } from '../../src/index.js';
import { readCacheTags } from './read-tags.js';
import { CACHE_TAGS, RequestCacheTags } from './request-cache-tags.js';

export { CACHE_TAGS, RequestCacheTags, type FetchCacheTags } from './request-cache-tags.js';
export { readCacheTags, type TagReading } from './read-tags.js';

/** Options of `useCacheTags`: none. */
export const cacheTagsOptionsSchema = z.strictObject({});

/** Options of `useCacheTags` (none today). */
export type CacheTagsOptions = z.input<typeof cacheTagsOptionsSchema>;

/** Reads subgraph cache tags into `CACHE_TAGS` request state. Merged multi-fetch requests are skipped. */
export const useCacheTags = definePlugin({
  name: 'cache-tags',
  options: cacheTagsOptionsSchema,
  setup() {
    return {
      hooks: {
        onFetch(event) {
          // Merged requests alias their `_entities` fields; no tag layout is defined for them.
          if (event.input.merged || event.input.operationType !== 'query') return;
          return function recordCacheTags(after) {
            if (after.shortCircuitedBy !== undefined) return;
            const reading = readCacheTags(after.input, after.output);
            if (!reading.ok) {
              if (reading.reason) after.log.debug({ subgraph: after.input.subgraph, reason: reading.reason }, 'Cache tags dropped');
              return;
            }
            let tags = after.state.get(CACHE_TAGS);
            if (!tags) after.state.set(CACHE_TAGS, (tags = new RequestCacheTags()));
            tags.record(after.input, reading.tags);
          };
        },
      },
    };
  },
});
