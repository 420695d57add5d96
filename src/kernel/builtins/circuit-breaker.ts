/**
 * The per-subgraph circuit breaker (`traffic_shaping.*.circuit_breaker`;
 * fetch/resilience.ts) as an internal plugin, registered only when some
 * subgraph has one. Its fetch hook wraps the call (`aroundStage`) innermost
 * of the built-ins: it sees each call that leaves the router once, after
 * in-flight sharing and per retry attempt, and never a call a plugin
 * answered (a cache hit is served while the circuit is open).
 */
import type { CoreConfig } from '../config/core-schema.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import { circuitBreakerWrapper, type FetchWrapper } from '../fetch/resilience.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { anyPolicy, PerSubgraph, policyFor } from './subgraph-policies.js';

/** Whether any subgraph has a circuit breaker. */
export function circuitBreakerOn(config: CoreConfig): boolean {
  return anyPolicy(config.traffic_shaping, 'circuit_breaker', (policy) => policy.enabled);
}

export function circuitBreakerPlugin(config: CoreConfig, graph: () => LoadedGraph | undefined): SwitchyardPlugin {
  const breakersOf = (): PerSubgraph<FetchWrapper | undefined> =>
    new PerSubgraph((subgraph) => {
      const policy = policyFor(config.traffic_shaping, 'circuit_breaker', subgraph);
      return policy.enabled ? circuitBreakerWrapper(policy, subgraph) : undefined;
    });
  // Breakers per loaded graph: a reloaded graph (its subgraphs may have moved) starts with closed circuits.
  const perGraph = new WeakMap<LoadedGraph, PerSubgraph<FetchWrapper | undefined>>();
  const beforeAnyGraph = breakersOf();
  const breakers = (): PerSubgraph<FetchWrapper | undefined> => {
    const current = graph();
    if (!current) return beforeAnyGraph;
    let found = perGraph.get(current);
    if (!found) perGraph.set(current, (found = breakersOf()));
    return found;
  };
  return {
    name: 'switchyard/circuit-breaker',
    setup: () => ({
      hooks: {
        onFetch(event) {
          const breaker = breakers().for(event.input.subgraph);
          if (breaker) event.aroundStage(breaker);
        },
      },
    }),
  };
}
