/**
 * `limits.max_depth`, `max_aliases` and `max_fields` (checked on the parsed
 * document, after fragment expansion; router/request-limits.ts) as an
 * internal plugin, registered only when one of them is set. Its `parse`
 * after-hook runs first of the after-hooks, on the document whoever made it
 * (the parser, a cache, a plugin), so a refused document reaches neither
 * other plugins' after-hooks nor validation. What the router refuses
 * whatever the config (fragment cycles, nesting past MAX_NESTING) stays in
 * the kernel, right after the parse stage.
 */
import type { LimitsConfig } from '../config/core-schema.js';
import type { AfterStageHook } from '../pipeline/hooks.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { checkConfiguredLimits } from '../router/request-limits.js';

export function requestLimitsPlugin(limits: LimitsConfig): SwitchyardPlugin {
  // One after-hook for every request: nothing is allocated per request.
  const check: AfterStageHook<'parse'> = (event) => checkConfiguredLimits(event.output, limits);
  return {
    name: 'switchyard/request-limits',
    setup: () => ({
      hooks: {
        onParse: () => check,
      },
    }),
  };
}
