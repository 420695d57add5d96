import { ConfigError, type LoadedConfig, type SwitchyardPlugin } from '../../src/index.js';
import type { PersistedOperationsConfig } from './config.js';
import { usePersistedOperations } from './index.js';

/** The plugin the `persisted_operations` section asks for: one when `enabled`, none otherwise. */
export function persistedOperationsPlugins(config: LoadedConfig): SwitchyardPlugin[] {
  // Safe: the section was validated with persistedOperationsConfigSchema when the config was loaded.
  const section = config.sections.persisted_operations as PersistedOperationsConfig | undefined;
  if (!section?.enabled) return [];
  const { storage } = section;
  if (storage.provider === 'sharedstore' && !config.core.storage_providers.sharedstore.some((provider) => provider.id === storage.provider_id)) {
    const message = `unknown shared store "${storage.provider_id}"; declare it under storage_providers.sharedstore`;
    throw new ConfigError([{ path: 'persisted_operations.storage.provider_id', message, plugin: 'persisted-operations' }]);
  }
  return [usePersistedOperations.fromParsed(section)];
}
