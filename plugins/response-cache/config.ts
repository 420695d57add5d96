/**
 * The `response_cache` section of router.config.yaml, declared once for the
 * config loader and `switchyard router` (its schema is in `options.ts`).
 * Kept apart from the plugin so reading the config does not load it.
 */
import { defineConfigSection, type SwitchyardPlugin } from '../../src/index.js';
import { responseCacheOptionsSchema } from './options.js';

/**
 * The `response_cache` section: `cache-tags` then `response-cache` when
 * enabled (or when only the invalidation endpoint is, so the plugin can warn
 * that it will not start); none otherwise.
 */
export const responseCacheSection = defineConfigSection({
  key: 'response_cache',
  plugin: 'response-cache',
  schema: responseCacheOptionsSchema,
  async fromConfig(section, { core }): Promise<SwitchyardPlugin[]> {
    if (!section || (!section.enabled && !section.invalidation.endpoint.enabled)) return [];
    if (section.enabled && section.storage?.provider === 'sharedstore') {
      // Checked here too so a bad id stops startup before any plugin starts.
      const { findSharedStore } = await import('./store/find-shared-store.js');
      findSharedStore(core, section.storage.provider_id);
    }
    const [{ useCacheTags }, { useResponseCache }] = await Promise.all([import('../cache-tags/index.js'), import('./index.js')]);
    return [useCacheTags.fromParsed({}), useResponseCache.fromParsed(section)];
  },
});
