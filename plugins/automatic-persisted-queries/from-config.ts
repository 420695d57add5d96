import type { LoadedConfig, SwitchyardPlugin } from '../../src/index.js';
import type { AutomaticPersistedQueriesConfig } from './config.js';
import { useAutomaticPersistedQueries } from './index.js';

/** The plugin the `automatic_persisted_queries` section asks for: one when `enabled`, none otherwise. */
export function automaticPersistedQueriesPlugins(config: LoadedConfig): SwitchyardPlugin[] {
  // Safe: the section was validated with automaticPersistedQueriesConfigSchema when the config was loaded.
  const section = config.sections.automatic_persisted_queries as AutomaticPersistedQueriesConfig | undefined;
  return section?.enabled ? [useAutomaticPersistedQueries.fromParsed(section)] : [];
}
