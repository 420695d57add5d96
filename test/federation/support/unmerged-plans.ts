import { FederationIndex } from '../../../src/kernel/graph/federation-index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import type { SwitchyardPlugin } from '../../../src/kernel/pipeline/plugin.js';
import { buildQueryPlan } from '../../../src/kernel/plan/build-plan.js';

/**
 * A plugin planning every operation without fetch merging (one entity call
 * per path): the general path that merged plans' answers are compared with.
 */
export function unmergedPlans(supergraphSdl: () => string): SwitchyardPlugin {
  let index: FederationIndex | undefined;
  return {
    name: 'unmerged-plans',
    setup: () => ({
      hooks: {
        onPlan: (event) => {
          index ??= new FederationIndex(readSupergraph(supergraphSdl()));
          const { document, operationName, conditions } = event.input;
          event.respondWith(buildQueryPlan(index, document, operationName, conditions, { mergeFetches: false }));
        },
      },
    }),
  };
}
