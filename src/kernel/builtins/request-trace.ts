/**
 * The playground's request trace: a request sending `X-Switchyard-Include-Trace:
 * true` gets `extensions.trace` (planning time and plan-cache hit, one entry
 * per subgraph fetch; see router/request-trace.ts for the collector).
 * Registered only where plans may be shown, as the trace shows the plan's
 * fetches.
 */
import type { SubgraphErrorPropagationConfig } from '../config/core-schema.js';
import { subgraphErrorPolicy } from '../execute/subgraph-errors.js';
import { LoadedGraph } from '../graph/loaded-graph.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import type { QueryPlan } from '../plan/query-plan.js';
import { planCacheKey } from '../router/plan-stage.js';
import { REQUEST_TRACE, RequestTrace, TRACE_HEADER } from '../router/request-trace.js';

export function requestTracePlugin(errors: SubgraphErrorPropagationConfig): SwitchyardPlugin {
  // The trace's subgraph errors follow the response's propagation rules.
  const errorPolicy = subgraphErrorPolicy(errors);
  return {
    name: 'switchyard/request-trace',
    setup: () => ({
      hooks: {
        // First of the request hooks: the trace covers every plugin's work.
        onRequest(event) {
          if (event.input.headers[TRACE_HEADER] !== 'true') return;
          const trace = new RequestTrace(errorPolicy);
          event.state.set(REQUEST_TRACE, trace);
          return (after) => {
            // Gone when the operation turned out to be a subscription: its stream is not answered once.
            if (after.state.get(REQUEST_TRACE) !== trace) return;
            const response = after.output;
            after.setOutput({ ...response, body: { ...response.body, extensions: { ...response.body.extensions, trace: trace.toJSON() } } });
          };
        },
        onPlan(event) {
          const trace = event.state.get(REQUEST_TRACE);
          if (!trace) return;
          const plan = trace.beginPlan();
          // The plan cache of the graph this operation is planned on (not the current one, should a reload come in between).
          const { graph } = event.input;
          const cached: QueryPlan | undefined = graph instanceof LoadedGraph ? graph.plans.peek(planCacheKey(graph, event.input).key) : undefined;
          event.whenSettled(() => plan.done());
          return (after) => {
            if (after.output.operation.operationType === 'subscription') {
              // A subscription streams its events (each through respond): the trace is for answers given once.
              after.state.delete(REQUEST_TRACE);
              return;
            }
            // A plan a plugin answered with stays `cacheHit: null`; the kernel's plan is the cached one on a hit.
            if (after.shortCircuitedBy === undefined) plan.cacheHit(cached !== undefined && after.output === cached);
          };
        },
        onFetch(event) {
          const trace = event.state.get(REQUEST_TRACE);
          if (!trace) return;
          const fetch = trace.beginFetch(event.input);
          event.whenSettled((outcome) => {
            if (outcome.ok) fetch.answered(outcome.output);
            else fetch.failed(outcome.error);
          });
          return (after) => {
            // Nobody answered in its place: the request left the router as the stage ran it.
            if (after.shortCircuitedBy === undefined) fetch.sending(after.input);
          };
        },
      },
    }),
  };
}
