/**
 * Query-plan exposure: a request sending `X-Switchyard-Include-Query-Plan:
 * true` gets the plan it ran in `extensions.queryPlan`. Registered only where
 * plans may be shown (`query_plans.enabled`, default: as introspection): they
 * name the subgraphs and their fields.
 */
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { StateKey } from '../pipeline/state.js';
import type { QueryPlan } from '../plan/query-plan.js';

/** Request header asking for `extensions.queryPlan`. */
export const QUERY_PLAN_HEADER = 'x-switchyard-include-query-plan';

/** Set on a request that asked for its plan; holds the plan once planned. */
const PLAN_WANTED = new StateKey<{ plan: QueryPlan | undefined }>('query-plan');

/** The plan as clients see it in `extensions.queryPlan` (the normalized operation left out). */
export function serializePlan(plan: QueryPlan): { kind: 'QueryPlan'; node: QueryPlan['node'] } {
  return { kind: 'QueryPlan', node: plan.node };
}

export function queryPlanPlugin(): SwitchyardPlugin {
  return {
    name: 'switchyard/query-plan',
    setup: () => ({
      hooks: {
        onRequest(event) {
          if (event.input.headers[QUERY_PLAN_HEADER] === 'true') event.state.set(PLAN_WANTED, { plan: undefined });
        },
        onPlan(event) {
          const wanted = event.state.get(PLAN_WANTED);
          if (!wanted) return;
          // The plan the operation runs with, whoever made it (the plan cache, the planner or a plugin).
          return (after) => {
            // A subscription's events are answered one by one, each without its plan.
            if (after.output.operation.operationType !== 'subscription') wanted.plan = after.output;
          };
        },
        onRespond(event) {
          const plan = event.state.get(PLAN_WANTED)?.plan;
          // Only answers that executed: a request that failed after planning shows no plan.
          if (!plan || event.input.body.data === undefined) return;
          const response = event.input;
          event.setInput({ ...response, body: { ...response.body, extensions: { queryPlan: serializePlan(plan), ...response.body.extensions } } });
        },
      },
    }),
  };
}
