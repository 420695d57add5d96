import type { ConfigSection } from '../kernel/config/config-section.js';
import type { SwitchyardPlugin } from '../kernel/pipeline/plugin.js';
import { authenticationSection } from '../../plugins/authentication/config.js';
import { authorizationSection } from '../../plugins/authorization/config.js';
import { automaticPersistedQueriesSection } from '../../plugins/automatic-persisted-queries/config.js';
import { connectSection } from '../../plugins/connect/config.js';
import { persistedOperationsSection } from '../../plugins/persisted-operations/config.js';
import { profilerSection } from '../../plugins/profiling/config.js';
import { responseCacheSection } from '../../plugins/response-cache/config.js';
import { accessLogsSection, telemetrySection } from '../../plugins/telemetry/config.js';

/**
 * The built-in plugins' config sections, each declared once in its plugin's
 * `config.ts` (key, schema, environment-only variables, the plugins it
 * switches on), in the order their hooks run. A section loads its plugin
 * module only when it switches the plugin on.
 */
export const builtinSections: readonly ConfigSection[] = [
  // Observers first: their hooks see every request (also ones a later plugin answers) and every fetch (also cache hits).
  telemetrySection,
  accessLogsSection,
  // Also on when PPROF_ADDR is set, with no `profiler` section at all.
  profilerSection,
  // Authentication and authorization before anything that answers or caches: a bad token is refused first, and fields are removed before any plan is made.
  authenticationSection,
  authorizationSection,
  // APQ before persisted operations: an unknown hash is answered by the first (docs/persisted-operations.md).
  automaticPersistedQueriesSection,
  persistedOperationsSection,
  // Yields cache-tags then response-cache: the cache reads the tags cache-tags recorded.
  responseCacheSection,
  // A side listener: its calls enter through router.execute, so every plugin above applies to them.
  connectSection,
];

/**
 * Built-in plugins which `switchyard router` adds to every router (after the
 * configured ones, unless one of that name is there): they stay idle until
 * the graph needs them. `grpc` serves subgraphs of kind `grpc`; without one
 * it is never called and loads neither @grpc/grpc-js nor protobufjs
 * (docs/grpc.md). `authorization`, with its defaults when neither its
 * section nor `authentication` put it on, enforces the supergraph's
 * `@authenticated`, `@requiresScopes` and `@policy` (every caller
 * anonymous): those fields are never served open for want of a section, as
 * in Cosmo's router; a graph without them costs one check per plan.
 */
export async function graphDrivenPlugins(configured: readonly SwitchyardPlugin[]): Promise<SwitchyardPlugin[]> {
  const has = (name: string) => configured.some((plugin) => plugin.name === name);
  const added: SwitchyardPlugin[] = [];
  if (!has('authorization')) added.push((await import('../../plugins/authorization/index.js')).useAuthorization());
  if (!has('grpc')) added.push((await import('../../plugins/grpc/index.js')).useGrpc());
  return added;
}
