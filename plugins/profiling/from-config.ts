import { ConfigError, hostPort, type LoadedConfig, type SwitchyardPlugin } from '../../src/index.js';
import { useProfiling } from './index.js';
import { profilerSectionSchema, type ProfilerSection } from './options.js';

/** The environment-only switch of the profiling endpoints. */
export const PPROF_ADDR_VARIABLE = 'PPROF_ADDR';

/**
 * The plugins the config file and environment ask for: the profiling plugin
 * when `profiler.enabled` is true or `PPROF_ADDR` is set (even without a
 * `profiler` section), none otherwise.
 */
export function profilingPlugins(config: LoadedConfig, env: NodeJS.ProcessEnv): SwitchyardPlugin[] {
  // Safe: the section was validated with profilerSectionSchema when the config was loaded.
  const given = config.sections.profiler as ProfilerSection | undefined;
  const pprofAddr = env[PPROF_ADDR_VARIABLE] === '' ? undefined : env[PPROF_ADDR_VARIABLE];
  if (!given?.enabled && pprofAddr === undefined) return [];
  if (pprofAddr !== undefined) {
    const checked = hostPort({ allowPortZero: true }).safeParse(pprofAddr);
    if (!checked.success) {
      const message = checked.error.issues[0]?.message ?? 'must be host:port or :port';
      throw new ConfigError([{ path: PPROF_ADDR_VARIABLE, message, plugin: 'profiling' }]);
    }
  }
  const section = given ?? profilerSectionSchema.parse({});
  return [useProfiling.fromParsed({ ...section, pprof_addr: pprofAddr })];
}
