import type { LoadedConfig, SwitchyardPlugin } from '../../src/index.js';
import type { AuthenticationConfig } from './config.js';
import { useAuthentication } from './index.js';

/** The plugin the `authentication` section asks for: one when the section is there, none otherwise. */
export function authenticationPlugins(config: LoadedConfig): SwitchyardPlugin[] {
  // Safe: the section was validated with authenticationConfigSchema when the config was loaded.
  const section = config.sections.authentication as AuthenticationConfig | undefined;
  return section ? [useAuthentication.fromParsed(section)] : [];
}
