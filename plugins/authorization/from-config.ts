import type { LoadedConfig, SwitchyardPlugin } from '../../src/index.js';
import { authorizationConfigSchema, type AuthorizationConfig } from './config.js';
import { useAuthorization } from './index.js';

/**
 * The plugin the `authorization` section asks for. It is on whenever
 * `authorization` or `authentication` is configured (the defaults apply
 * without an `authorization` section): the directives of the supergraph are
 * enforced as soon as tokens are read.
 */
export function authorizationPlugins(config: LoadedConfig): SwitchyardPlugin[] {
  // Safe: the section was validated with authorizationConfigSchema when the config was loaded.
  const section = config.sections.authorization as AuthorizationConfig | undefined;
  if (!section && config.sections.authentication === undefined) return [];
  return [useAuthorization.fromParsed(section ?? authorizationConfigSchema.parse({}))];
}
