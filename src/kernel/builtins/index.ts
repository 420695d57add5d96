/**
 * The router's built-in features that run on the hook grammar, as internal
 * plugins: registered ahead of every user plugin, in this order, and only
 * when their feature is on, so a feature that is off has no hook at all.
 * They do not appear in the router's plugin list (`router.plugins`).
 */
import { queryPlansEnabled, type CoreConfig } from '../config/core-schema.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { queryPlanPlugin } from './query-plan.js';
import { requestTracePlugin } from './request-trace.js';

/** What the built-ins read from the router. */
export interface BuiltinEnvironment {
  readonly config: CoreConfig;
  /** The graph being served (the trace reads its plan cache). */
  readonly graph: () => LoadedGraph | undefined;
}

/** The internal plugins for this configuration, in registration order. */
export function builtinPlugins(env: BuiltinEnvironment): SwitchyardPlugin[] {
  const plugins: SwitchyardPlugin[] = [];
  // Both show the plan (its subgraphs and fields): only where `query_plans.enabled` allows.
  if (queryPlansEnabled(env.config)) {
    // First: its request hook sees the request before any other plugin, and its trace covers them all.
    plugins.push(requestTracePlugin(env.graph));
    plugins.push(queryPlanPlugin());
  }
  return plugins;
}
