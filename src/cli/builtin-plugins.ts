import type { z } from 'zod';
import type { LoadedConfig } from '../kernel/config/load-config.js';
import type { SwitchyardPlugin } from '../kernel/pipeline/plugin.js';
import { profilerSectionSchema } from '../../plugins/profiling/options.js';
import { automaticPersistedQueriesConfigSchema } from '../../plugins/automatic-persisted-queries/config.js';
import { persistedOperationsConfigSchema } from '../../plugins/persisted-operations/config.js';
import { responseCacheOptionsSchema } from '../../plugins/response-cache/options.js';
import { connectConfigSchema } from '../../plugins/connect/config.js';
import { accessLogsOptionsSchema, telemetryOptionsSchema } from '../../plugins/telemetry/options.js';
import { authenticationConfigSchema } from '../../plugins/authentication/config.js';
import { authorizationConfigSchema } from '../../plugins/authorization/config.js';

/** A built-in plugin's config section, and how it turns into plugin instances. */
export interface BuiltinSection {
  /** Top-level key in `router.config.yaml`. */
  readonly key: string;
  /** Schema of the section (validated with the rest of the file). */
  readonly schema: z.ZodType;
  /** Name of the plugin that owns it. */
  readonly plugin: string;
  /** The plugins the section switches on; none when disabled (a disabled plugin costs nothing). */
  plugins(config: LoadedConfig, env: NodeJS.ProcessEnv): Promise<SwitchyardPlugin[]>;
}

/**
 * Built-in plugins switched on from the config file, in the order their
 * hooks run. Each entry loads its plugin module only when enabled.
 */
export const builtinSections: readonly BuiltinSection[] = [
  // Observers first: their hooks see every request (also ones a later plugin answers) and every fetch (also cache hits).
  {
    key: 'telemetry',
    schema: telemetryOptionsSchema,
    plugin: 'telemetry',
    plugins: async (config) => (await import('../../plugins/telemetry/from-config.js')).telemetryPlugins(config),
  },
  {
    key: 'access_logs',
    schema: accessLogsOptionsSchema,
    plugin: 'access-logs',
    plugins: async (config) => (await import('../../plugins/telemetry/from-config.js')).accessLogsPlugins(config),
  },
  // Also on when PPROF_ADDR is set, with no `profiler` section at all.
  {
    key: 'profiler',
    schema: profilerSectionSchema,
    plugin: 'profiling',
    plugins: async (config, env) => (await import('../../plugins/profiling/from-config.js')).profilingPlugins(config, env),
  },
  // Authentication and authorization before anything that answers or caches: a bad token is refused first, and fields are removed before any plan is made.
  {
    key: 'authentication',
    schema: authenticationConfigSchema,
    plugin: 'authentication',
    plugins: async (config) => (await import('../../plugins/authentication/from-config.js')).authenticationPlugins(config),
  },
  {
    key: 'authorization',
    schema: authorizationConfigSchema,
    plugin: 'authorization',
    plugins: async (config) => (await import('../../plugins/authorization/from-config.js')).authorizationPlugins(config),
  },
  // APQ before persisted operations: an unknown hash is answered by the first (docs/persisted-operations.md).
  {
    key: 'automatic_persisted_queries',
    schema: automaticPersistedQueriesConfigSchema,
    plugin: 'automatic-persisted-queries',
    plugins: async (config) => (await import('../../plugins/automatic-persisted-queries/from-config.js')).automaticPersistedQueriesPlugins(config),
  },
  {
    key: 'persisted_operations',
    schema: persistedOperationsConfigSchema,
    plugin: 'persisted-operations',
    plugins: async (config) => (await import('../../plugins/persisted-operations/from-config.js')).persistedOperationsPlugins(config),
  },
  // Yields cache-tags then response-cache: the cache reads the tags cache-tags recorded.
  {
    key: 'response_cache',
    schema: responseCacheOptionsSchema,
    plugin: 'response-cache',
    plugins: async (config) => (await import('../../plugins/response-cache/from-config.js')).responseCachePlugins(config),
  },
  // A side listener: its calls enter through router.execute, so every plugin above applies to them.
  {
    key: 'connect_rpc',
    schema: connectConfigSchema,
    plugin: 'connect',
    plugins: async (config) => (await import('../../plugins/connect/from-config.js')).connectPlugins(config),
  },
];

/**
 * Built-in plugins with no config section, which `switchyard router` adds to
 * every router (after the configured ones, unless one of that name is
 * there): they stay idle until the graph needs them. `grpc` serves subgraphs
 * of kind `grpc`; without one it is never called and loads neither
 * @grpc/grpc-js nor protobufjs (docs/grpc.md).
 */
export async function graphDrivenPlugins(configured: readonly SwitchyardPlugin[]): Promise<SwitchyardPlugin[]> {
  if (configured.some((plugin) => plugin.name === 'grpc')) return [];
  return [(await import('../../plugins/grpc/index.js')).useGrpc()];
}
