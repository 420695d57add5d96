/**
 * The `profiler` section of router.config.yaml and the `PPROF_ADDR`
 * switch, declared once for the config loader and `switchyard router`.
 * Kept apart from the plugin so reading the config does not load it.
 */
import { defineConfigSection, hostPort, type SwitchyardPlugin } from '../../src/index.js';
import { profilerSectionSchema } from './options.js';

/** The environment-only switch of the profiling endpoints. */
export const PPROF_ADDR_VARIABLE = 'PPROF_ADDR';

/**
 * The `profiler` section. The plugin is on when `profiler.enabled` is true or
 * `PPROF_ADDR` is set (even without a `profiler` section).
 */
export const profilerSection = defineConfigSection({
  key: 'profiler',
  plugin: 'profiling',
  schema: profilerSectionSchema,
  env: { [PPROF_ADDR_VARIABLE]: hostPort({ allowPortZero: true }) },
  async fromConfig(given, { env }): Promise<SwitchyardPlugin[]> {
    const pprofAddr = env[PPROF_ADDR_VARIABLE];
    if (!given?.enabled && pprofAddr === undefined) return [];
    const { useProfiling } = await import('./index.js');
    return [useProfiling.fromParsed({ ...(given ?? profilerSectionSchema.parse({})), pprof_addr: pprofAddr })];
  },
});
