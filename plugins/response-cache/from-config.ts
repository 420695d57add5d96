import type { LoadedConfig, SwitchyardPlugin } from '../../src/index.js';
import { useCacheTags } from '../cache-tags/index.js';
import { useResponseCache } from './index.js';
import type { ResolvedResponseCacheOptions } from './options.js';
import { findSharedStore } from './store/find-shared-store.js';

/**
 * The plugins the `response_cache` section asks for: `cache-tags` then
 * `response-cache` when enabled (or when only the endpoint is, so the
 * plugin can warn that it will not start); none otherwise.
 */
export function responseCachePlugins(config: LoadedConfig): SwitchyardPlugin[] {
  // Safe: the section was validated with responseCacheOptionsSchema when the config was loaded.
  const section = config.sections.response_cache as ResolvedResponseCacheOptions | undefined;
  if (!section || (!section.enabled && !section.invalidation.endpoint.enabled)) return [];
  // Checked here too so a bad id stops startup before any plugin starts.
  if (section.enabled && section.storage?.provider === 'sharedstore') findSharedStore(config.core, section.storage.provider_id);
  return [useCacheTags.fromParsed({}), useResponseCache.fromParsed(section)];
}
