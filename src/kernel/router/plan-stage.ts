/**
 * The plan stage of one operation on one graph: the plan input (cache key,
 * `@skip`/`@include` values, the graph), the plugins' plan hooks, then the
 * graph's plan cache or the planner. Queries, mutations and subscriptions
 * plan here, and a running subscription plans here again when the graph is
 * reloaded, so what plan hooks decide (authorization's filtering) is decided
 * on the graph the operation runs on.
 */
import type { DocumentNode } from 'graphql';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import { setOwn } from '../own-property.js';
import { runStage, type StageScope } from '../pipeline/stage-runner.js';
import { buildQueryPlan } from '../plan/build-plan.js';
import { conditionVariables } from '../plan/normalize.js';
import type { QueryPlan } from '../plan/query-plan.js';
import type { LabelsOn } from '../graph/override-label.js';
import type { PlanInput } from '../pipeline/stages.js';
import type { StageHooks } from './plugin-host.js';

/** What is planned: a parsed, valid operation and the values its `@skip`/`@include` read. */
export interface PlanRequest {
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  readonly coercedVariables: Readonly<Record<string, unknown>>;
  /** The operation text as the client sent it (or a plugin supplied it): part of the plan cache key. */
  readonly query: string | undefined;
  /** Progressive `@override` labels drawn before (a subscription planned again keeps its draw); drawn here when absent. */
  readonly overrideLabels?: readonly string[];
}

/** Runs the plan stage for `request` on `graph`. */
export function planStage(graph: LoadedGraph, hooks: StageHooks, scope: StageScope, request: PlanRequest): Promise<QueryPlan> {
  const { document, operationName, coercedVariables, query } = request;
  const names = conditionVariableNames(document);
  const conditions: Record<string, unknown> = {};
  for (const name of names) setOwn(conditions, name, coercedVariables[name]);
  const cacheKey = names.length > 0 ? `${operationName ?? ''}\n${JSON.stringify(conditions)}\n${query}` : `${operationName ?? ''}\n${query}`;
  // Progressive @override: the percent(x) labels on for this operation, drawn for it.
  const overrideLabels = request.overrideLabels ?? graph.overrideLabels.draw();
  // The plan comes from `graph` whatever a hook does to the input: hooks read the graph, they do not pick it.
  return runStage('plan', hooks.plan, { document, operationName, conditions, cacheKey, overrideLabels, graph }, scope, (input) => {
    const { key, labels } = planCacheKey(graph, input);
    const cached = graph.plans.get(key);
    if (cached) return cached;
    const built = buildQueryPlan(graph.planningIndex(labels), input.document, input.operationName, input.conditions);
    graph.plans.set(key, built);
    return built;
  });
}

/**
 * The key of the plan for `input` in the graph's plan cache: the input's
 * `cacheKey` (which a plan hook may have replaced) with the override labels on.
 */
export function planCacheKey(graph: LoadedGraph, input: Pick<PlanInput, 'cacheKey' | 'overrideLabels'>): { key: string; labels: LabelsOn } {
  const labels = graph.overrideLabels.labelsOn(input.overrideLabels);
  // The NUL keeps the two kinds of key apart: no operation text or JSON value (the kernel's keys end with one) begins with it.
  return { key: labels.key === '' ? input.cacheKey : `${labels.key}\n\u0000${input.cacheKey}`, labels };
}

const conditionCache = new WeakMap<DocumentNode, string[]>();

/** Names of the variables the document's `@skip`/`@include` read (worked out once per document). */
function conditionVariableNames(document: DocumentNode): string[] {
  let names = conditionCache.get(document);
  if (!names) {
    names = conditionVariables(document);
    conditionCache.set(document, names);
  }
  return names;
}
