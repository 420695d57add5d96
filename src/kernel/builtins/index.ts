/**
 * The router's built-in features that run on the hook grammar, as internal
 * plugins: registered ahead of every user plugin, in this order, and only
 * when their feature is on, so a feature that is off has no hook at all.
 * They do not appear in the router's plugin list (`router.plugins`).
 */
import { queryPlansEnabled, type CoreConfig } from '../config/core-schema.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { hasHeaderRules } from '../fetch/header-rules.js';
import { hasDocumentLimits } from '../router/request-limits.js';
import { circuitBreakerOn, circuitBreakerPlugin } from './circuit-breaker.js';
import { headerRulesPlugin } from './header-rules.js';
import { metricsPlugin } from './metrics.js';
import { queryPlanPlugin } from './query-plan.js';
import { requestLimitsPlugin } from './request-limits.js';
import { requestTracePlugin } from './request-trace.js';
import { retriesOn, retriesPlugin } from './retries.js';
import { singleFlightPlugin } from './single-flight.js';
import { corsPlugin } from './cors.js';
import { healthPlugin } from './health.js';
import { playgroundPlugin } from './playground.js';

/** What the built-ins read from the router. */
export interface BuiltinEnvironment {
  readonly config: CoreConfig;
  /** The graph being served (the circuit breaker reads its subgraphs). */
  readonly graph: () => LoadedGraph | undefined;
  /** Readiness (`/health/ready`): a graph is loaded and the router is not closing. */
  readonly ready: () => boolean;
}

/** The internal plugins for this configuration, in registration order. */
export function builtinPlugins(env: BuiltinEnvironment): SwitchyardPlugin[] {
  const plugins: SwitchyardPlugin[] = [];
  // First of all: its clocks start before, and stop after, every other plugin's request hooks.
  // Whether metrics are recorded is known at setup (a user plugin may need them): off, it sets up no hook.
  plugins.push(metricsPlugin());
  // Both show the plan (its subgraphs and fields): only where `query_plans.enabled` allows.
  if (queryPlansEnabled(env.config)) {
    // First after the metrics: its request hook sees the request before any plugin that changes it, and its trace covers them all.
    plugins.push(requestTracePlugin(env.config.subgraph_error_propagation));
    plugins.push(queryPlanPlugin());
  }
  if (hasDocumentLimits(env.config.limits)) plugins.push(requestLimitsPlugin(env.config.limits));
  // Ahead of user fetch hooks: they see the headers that will be sent.
  if (hasHeaderRules(env.config.headers)) plugins.push(headerRulesPlugin(env.config.headers));
  // The subgraph call's wrappers, outermost first (after the metrics' clock): sharing, then retries, then the breaker,
  // so that a shared call is retried once and the breaker counts each call that leaves the router.
  if (env.config.engine.enable_single_flight) plugins.push(singleFlightPlugin());
  if (retriesOn(env.config)) plugins.push(retriesPlugin(env.config));
  if (circuitBreakerOn(env.config)) plugins.push(circuitBreakerPlugin(env.config, env.graph));
  // Main-listener HTTP (routes beside /graphql, the CORS step before it): no per-request cost when off.
  plugins.push(healthPlugin(env.ready));
  if (env.config.playground.enabled) plugins.push(playgroundPlugin({ tracePanel: queryPlansEnabled(env.config) }));
  if (env.config.cors.enabled) plugins.push(corsPlugin(env.config.cors));
  return plugins;
}
