/**
 * Profiling: on-demand `/debug/pprof/*` endpoints on their own listener
 * (`PPROF_ADDR`), and continuous profiling that pushes CPU and heap
 * profiles to a Pyroscope-compatible server (`profiler.*`). Both share one
 * V8 profiler, so they may run together.
 *
 * ```ts
 * import { useProfiling } from 'switchyard/plugins/profiling';
 * createRouter({ plugins: [useProfiling({ pprof_addr: 'localhost:6060' })] });
 * ```
 */

import { RouterError, definePlugin, type Logger } from '../../src/index.js';
import { profilerSection } from './config.js';
import { profilingOptionsSchema } from './options.js';
import { profilingErrors } from './errors.js';

export {
  DEFAULT_APPLICATION_NAME,
  RESERVED_TAGS,
  profilerSectionSchema,
  profilingOptionsSchema,
  type ProfilerSection,
  type ProfilingOptions,
  type ProfilingOptionsInput,
} from './options.js';

type Stop = () => void | Promise<void>;

/** Loads the native profiler only when the plugin runs; a platform without it fails with a clear message. */
async function loadRuntime() {
  try {
    const [pprof, continuous] = await Promise.all([import('./pprof-server.js'), import('./continuous-profiler.js')]);
    return { startPprofServer: pprof.startPprofServer, startContinuousProfiler: continuous.startContinuousProfiler };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const message = `[profiling] the profiler (@datadog/pprof) cannot be loaded on ${process.platform}-${process.arch} with Node ${process.version}: ${reason}`;
    throw new RouterError('PROFILING_UNAVAILABLE', message, { plugin: 'profiling', cause: error });
  }
}

async function stopAll(stops: readonly Stop[], log: Logger): Promise<void> {
  for (const stop of [...stops].reverse()) {
    try {
      await stop();
    } catch (error) {
      log.warn({ err: error }, 'Stopping profiling failed');
    }
  }
}

/** The plugin's error codes (docs/errors.md); exported so its `ErrorCodes` augmentation reaches the published types. */
export { profilingErrors } from './errors.js';

/** `useProfiling(options)`: the profiling plugin. Options are the `profiler` section plus `pprof_addr`. */
export const useProfiling = definePlugin({
  name: 'profiling',
  config: profilerSection,
  options: profilingOptionsSchema,
  errors: profilingErrors,
  async setup(ctx, options) {
    const { pprof_addr: pprofAddr, server_address: serverAddress } = options;
    if (pprofAddr === undefined && !options.enabled) {
      ctx.log.warn('Profiling plugin registered with nothing to do: set pprof_addr (PPROF_ADDR) or enabled');
      return {};
    }
    const runtime = await loadRuntime();
    const stops: Stop[] = [];
    try {
      if (pprofAddr !== undefined) stops.push((await runtime.startPprofServer(pprofAddr, ctx.log)).close);
      if (options.enabled && serverAddress !== undefined) {
        const continuous = runtime.startContinuousProfiler({ ...options, server_address: serverAddress }, ctx.log);
        stops.push(() => continuous.stop());
      }
    } catch (error) {
      await stopAll(stops, ctx.log);
      throw error;
    }
    return { stop: () => stopAll(stops, ctx.log) };
  },
});
