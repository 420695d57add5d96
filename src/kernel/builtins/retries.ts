/**
 * Retries of failed subgraph queries (`traffic_shaping.*.retry`; the
 * policy in fetch/resilience.ts) as an internal plugin, registered only when
 * some subgraph retries. Its fetch hook wraps the call (`aroundStage`)
 * inside in-flight sharing: requests sharing one call share its retries.
 */
import type { CoreConfig } from '../config/core-schema.js';
import { retries, retryWrapper, type FetchWrapper } from '../fetch/resilience.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { anyPolicy, PerSubgraph, policyFor } from './subgraph-policies.js';

/** Whether any subgraph's calls are retried. */
export function retriesOn(config: CoreConfig): boolean {
  return anyPolicy(config.traffic_shaping, 'retry', retries);
}

export function retriesPlugin(config: CoreConfig): SwitchyardPlugin {
  const wrappers = new PerSubgraph<FetchWrapper | undefined>((subgraph) => {
    const policy = policyFor(config.traffic_shaping, 'retry', subgraph);
    return retries(policy) ? retryWrapper(policy) : undefined;
  });
  return {
    name: 'switchyard/retries',
    setup: () => ({
      hooks: {
        onFetch(event) {
          const input = event.input;
          // Mutations are never retried (they may have run).
          if (input.operationType !== 'query') return;
          const wrapper = wrappers.for(input.subgraph);
          if (wrapper) event.aroundStage(wrapper);
        },
      },
    }),
  };
}
