/**
 * The planner benchmark: Switchyard's kernel planning the large operation of
 * `schema.ts` (five subgraphs), in-process:
 * - graph load (supergraph SDL -> model, index, API schema, response shaper),
 * - cold planning: parse + plan on a freshly loaded graph (empty memos),
 * - a new operation on a warm graph: parse + plan, memos filled,
 * - a plan-cache hit: the cache key as the router builds it
 *   (src/kernel/router/operation-runner.ts) and `LoadedGraph.plans.get`.
 * For scale, the same operation through Hive's Rust planner and Apollo's
 * JavaScript planner when their packages load (the other routers' planners).
 */
import { parse } from 'graphql';
import { composeSubgraphs } from '../../src/compose/index.js';
import { FederationIndex } from '../../src/kernel/graph/federation-index.js';
import { LoadedGraph } from '../../src/kernel/graph/loaded-graph.js';
import { buildQueryPlan } from '../../src/kernel/plan/build-plan.js';
import { PLANNER_OPERATION_NAME, PLANNER_QUERY, plannerSubgraphs } from './schema.js';
import { timeWork, type Timing, type TimingBounds } from './timing.js';

/** What the planner benchmark found. */
export interface PlannerReport {
  /** Fields selected in the operation (every field node, nested ones included). */
  readonly fieldCount: number;
  readonly subgraphCount: number;
  /** Fetch nodes in Switchyard's plan, by subgraph. */
  readonly fetchesBySubgraph: Readonly<Record<string, number>>;
  readonly timings: readonly Timing[];
  /** Reference planners that could not run here, with why. */
  readonly skipped: readonly string[];
}

function countFields(query: string): number {
  let count = 0;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      if ((node as { kind?: string }).kind === 'Field') count++;
      for (const value of Object.values(node)) if (value && typeof value === 'object') visit(value);
    }
  };
  visit(parse(query, { noLocation: true }).definitions);
  return count;
}

async function hivePlanner(sdl: string, bounds: TimingBounds): Promise<Timing[]> {
  const { QueryPlanner } = await import('@graphql-hive/router-query-planner');
  const load = timeWork('Hive Rust planner (@graphql-hive/router-query-planner): graph load', () => new QueryPlanner(sdl), { ...bounds, maxIterations: 20 });
  const planner = new QueryPlanner(sdl);
  const plan = timeWork('Hive Rust planner: plan the operation', () => planner.plan(PLANNER_QUERY, PLANNER_OPERATION_NAME, new Set(), 0), bounds);
  return [load, plan];
}

async function apolloPlanner(sdl: string, bounds: TimingBounds): Promise<Timing[]> {
  const { Supergraph, operationFromDocument } = await import('@apollo/federation-internals');
  const { QueryPlanner } = await import('@apollo/query-planner');
  const load = timeWork('Apollo planner (@apollo/query-planner): graph load', () => new QueryPlanner(Supergraph.build(sdl)), { ...bounds, maxIterations: 10 });
  const supergraph = Supergraph.build(sdl);
  const planner = new QueryPlanner(supergraph);
  const apiSchema = supergraph.apiSchema();
  const plan = timeWork(
    'Apollo planner: parse + plan the operation',
    () => planner.buildQueryPlan(operationFromDocument(apiSchema, parse(PLANNER_QUERY), { operationName: PLANNER_OPERATION_NAME })),
    { ...bounds, maxIterations: 200 },
  );
  return [load, plan];
}

/** Runs the planner benchmark; `quick` shortens every measurement. */
export async function runPlannerBenchmark(quick: boolean): Promise<PlannerReport> {
  const bounds: TimingBounds = { maxMs: quick ? 500 : 2000, maxIterations: quick ? 200 : 1000 };
  const composed = composeSubgraphs(
    plannerSubgraphs.map((s) => ({ name: s.name, url: `http://127.0.0.1:9/${s.name}`, sdl: s.sdl })),
    'the planner benchmark subgraphs',
  );
  const source = { ...composed, origin: 'bench/planner/schema.ts' };
  const timings: Timing[] = [];
  timings.push(timeWork('Switchyard: graph load (LoadedGraph)', () => new LoadedGraph(source, 1024), { ...bounds, maxIterations: 50 }));

  const graph = new LoadedGraph(source, 1024);
  let freshIndex = new FederationIndex(graph.supergraph);
  timings.push(
    timeWork(
      'Switchyard: cold plan (parse + plan, fresh graph index)',
      () => buildQueryPlan(freshIndex, parse(PLANNER_QUERY), PLANNER_OPERATION_NAME),
      bounds,
      () => (freshIndex = new FederationIndex(graph.supergraph)),
    ),
  );
  timings.push(timeWork('Switchyard: new operation on a warm graph (parse + plan)', () => buildQueryPlan(graph.index, parse(PLANNER_QUERY), PLANNER_OPERATION_NAME), bounds));
  const plan = buildQueryPlan(graph.index, parse(PLANNER_QUERY), PLANNER_OPERATION_NAME);
  graph.plans.set(`${PLANNER_OPERATION_NAME}\n${PLANNER_QUERY}`, plan);
  const operationName: string | undefined = PLANNER_OPERATION_NAME;
  timings.push(
    timeWork('Switchyard: plan-cache hit (key + LoadedGraph.plans.get)', () => graph.plans.get(`${operationName ?? ''}\n${PLANNER_QUERY}`), {
      ...bounds,
      batch: 1000,
    }),
  );

  const skipped: string[] = [];
  for (const [name, run] of [
    ['Hive Rust planner', hivePlanner],
    ['Apollo planner', apolloPlanner],
  ] as const) {
    try {
      timings.push(...(await run(composed.supergraphSdl, bounds)));
    } catch (error) {
      skipped.push(`${name}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  const fetchesBySubgraph: Record<string, number> = {};
  for (const fetch of plan.fetches) fetchesBySubgraph[fetch.subgraph] = (fetchesBySubgraph[fetch.subgraph] ?? 0) + 1;
  return { fieldCount: countFields(PLANNER_QUERY), subgraphCount: plannerSubgraphs.length, fetchesBySubgraph, timings, skipped };
}

function duration(us: number): string {
  if (us < 1) return `${(us * 1000).toFixed(0)} ns`;
  if (us < 1000) return `${us.toFixed(1)} us`;
  return `${(us / 1000).toFixed(2)} ms`;
}

/** The planner report as Markdown. */
export function renderPlannerReport(report: PlannerReport): string {
  const fetches = Object.entries(report.fetchesBySubgraph)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  const total = Object.values(report.fetchesBySubgraph).reduce((a, b) => a + b, 0);
  const lines = [
    `## Planner benchmark: ${report.fieldCount} fields, ${report.subgraphCount} subgraphs; Switchyard's plan has ${total} fetches (${fetches})`,
    '',
    '| measurement | median | p95 | min | iterations |',
    '|---|---:|---:|---:|---:|',
    ...report.timings.map((t) => `| ${t.name} | ${duration(t.medianUs)} | ${duration(t.p95Us)} | ${duration(t.minUs)} | ${t.iterations} |`),
  ];
  if (report.skipped.length > 0) lines.push('', ...report.skipped.map((s) => `- not measured: ${s}`));
  return `${lines.join('\n')}\n`;
}
