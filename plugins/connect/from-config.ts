import type { LoadedConfig, SwitchyardPlugin } from '../../src/index.js';
import { servicesFolder, type ConnectConfig } from './config.js';
import { useConnect } from './index.js';

/** The plugin the `connect_rpc` section asks for: `connect` when enabled, none otherwise. */
export function connectPlugins(config: LoadedConfig): SwitchyardPlugin[] {
  // Safe: the section was validated with connectConfigSchema when the config was loaded.
  const section = config.sections.connect_rpc as ConnectConfig | undefined;
  if (!section?.enabled) return [];
  // An undeclared storage provider is a config error now, not a failed start later.
  servicesFolder(section, config.core);
  return [useConnect.fromParsed(section)];
}
