/**
 * The plan-quality corpus: for every operation of the differential tests
 * (hive-gateway-agreement.test.ts), the benchmark operations, the
 * two-root-field operation, and seeded operations generated over each test
 * graph (support/generate-schema-operations.ts: fragments, type conditions,
 * `@skip`/`@include`), Switchyard's plan makes no more subgraph calls than
 * Hive's Rust query planner (@graphql-hive/router-query-planner) and, with
 * fetch merging, never more than without it; generated operations that
 * merging changes answer alike with merged and unmerged plans over real
 * subgraph servers. Prints the totals of both planners per graph. Answers
 * are compared with Hive Gateway's in hive-gateway-agreement.test.ts.
 */
import { QueryPlanner } from '@graphql-hive/router-query-planner';
import { parse, validate } from 'graphql';
import { readSupergraph } from '../../src/kernel/graph/read-supergraph.js';
import { describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { startSubgraph, startTestRouter, type SubgraphOptions } from '../../src/testing/index.js';
import { unmergedPlans } from './support/unmerged-plans.js';
import { BENCH_QUERY } from '../../bench/graph/operation.js';
import { benchSubgraphs } from '../../bench/graph/subgraphs.js';
import { PLANNER_QUERY, plannerSubgraphs } from '../../bench/planner/schema.js';
import { TWO_ROOTS_QUERY } from '../../bench/scenarios/two-roots.js';
import { scheduleParallel } from '../../src/kernel/execute/multi-fetch.js';
import { buildQueryPlan } from '../../src/kernel/plan/build-plan.js';
import type { PlanNode } from '../../src/kernel/plan/query-plan.js';
import { accountGraph } from './graphs/accounts.js';
import { bankGraph } from './graphs/bank.js';
import { gatewaysBenchGraph, TWO_ROOT_QUERY } from './graphs/gateways-bench.js';
import { generateOperation, seeded } from './support/generate-operations.js';
import { generateSchemaOperation } from './support/generate-schema-operations.js';
import { musicGraph } from './graphs/music.js';
import { parcelGraph } from './graphs/parcels.js';
import { recipeGraph } from './graphs/recipes.js';
import { vehicleGraph } from './graphs/vehicles.js';
import { warehouseGraph } from './graphs/warehouse.js';
import { zooGraph } from './graphs/zoo.js';
import { libraryGraph } from './graphs/library.js';
import { loanGraph } from './graphs/loans.js';
import { shopGraph } from './graphs/shop.js';
import { staffGraph } from './graphs/staff.js';
import { boardsGraph } from './graphs/boards.js';
import { weatherGraph } from './graphs/weather.js';
import { plannerFor } from '../kernel/plan/plan-helpers.js';

interface CorpusGraph {
  readonly graph: string;
  readonly subgraphs: () => ReadonlyArray<{ name: string; typeDefs: string }>;
  readonly operations: readonly string[];
}

/** Operations generated over the gateways-bench graph (the same ones on every run). */
function generated(count: number): string[] {
  const random = seeded(3);
  return Array.from({ length: count }, () => generateOperation(random));
}

const bench = () => benchSubgraphs.map((s) => ({ name: s.name, typeDefs: s.sdl }));
const planner = () => plannerSubgraphs.map((s) => ({ name: s.name, typeDefs: s.sdl }));

const CORPUS: readonly CorpusGraph[] = [
  {
    graph: 'parcelGraph',
    subgraphs: parcelGraph,
    operations: [
      '{ parcels { label price(currency: USD) { amount currency } } }',
      '{ parcel(id: "p1") { weight grams: weight(unit: GRAMS) price { amount } } }',
      '{ parcels { id hazardSurcharge duty insuranceCents } }',
      '{ cheapestParcel { label price(currency: USD) { amount } } }',
    ],
  },
  {
    graph: 'musicGraph',
    subgraphs: musicGraph,
    operations: [
      '{ chart { title artist { name country } } }',
      '{ queue { __typename ... on Song { title } ... on Podcast { title host } } }',
      '{ onAir { __typename id title ... on Song { plays } } }',
      'query($c: Boolean!) { albums { title artist @include(if: $c) { country } } }',
      '{ albums { artist { name } } }',
      '{ history { __typename title } }',
    ],
  },
  {
    graph: 'accountGraph',
    subgraphs: accountGraph,
    operations: [
      '{ overdue { __typename id } }',
      '{ overdue { plan ... on User { name } ... on Team { seats email } } }',
      '{ overdue { email balanceCents } }',
      '{ accounts { id ... on User { tickets { subject } } } }',
      '{ account(id: "t1") { __typename email ... on Team { seats } ... on User { name } } }',
      '{ accounts { id plan } }',
      '{ openTickets { requester { __typename email plan } } }',
    ],
  },
  {
    graph: 'zooGraph',
    subgraphs: zooGraph,
    operations: [
      '{ pets { __typename ... on Cat { name lives } ... on Parrot { name words } } }',
      '{ visitors { __typename ... on Cat { lives } ... on Dog { name goodBoy } ... on Parrot { words } } }',
      '{ visitors { ... on Animal { id name } } pets { ... on Animal { t: __typename name } } }',
      '{ animals { __typename name ... on Parrot { words } ... on Dog { goodBoy } } flyers { ... on Dog { goodBoy } ... on Parrot { name } } }',
      '{ pets { ... on Cat { vaccinated } ... on Dog { vaccinated } } flyers { name ... on Parrot { vaccinated } } }',
      '{ __typename }',
    ],
  },
  {
    graph: 'recipeGraph',
    subgraphs: recipeGraph,
    operations: [
      '{ recipes(filter: { maxMinutes: 60 }) { title cuisine inspiredBy } }',
      '{ recipe(id: "r3") { title cuisine } }',
      '{ recipes { title cuisine } }',
      'query($f: RecipeFilter, $u: Unit!) { recipes(filter: $f) { title } shoppingList(filter: $f, unit: $u) }',
      '{ convert(grams: 100, to: OUNCE) }',
      '{ recipes(filter: { vegan: true }) { title } }',
    ],
  },
  {
    graph: 'vehicleGraph',
    subgraphs: vehicleGraph,
    operations: [
      '{ vehicles { model tollsCents permit { zone validUntil } registeredIn { name } } }',
      '{ byPlate(plate: "XY-987") { vin model tollsCents } }',
      '{ openClaims { id policy { number insurer { name } premiumCents } } permits { number validUntil } }',
    ],
  },
  {
    graph: 'warehouseGraph',
    subgraphs: warehouseGraph,
    operations: [
      '{ bin(id: "b1") { items { sku priceCents } } }',
      '{ warehouse bins { label featured { name priceCents } } }',
      '{ bin(id: "b2") { label items { sku name priceCents } } }',
      '{ bin(id: "b2") { label featured { sku priceCents } } warehouse }',
      '{ bin(id: "b1") { items { sku discount { percent } } } }',
    ],
  },
  {
    graph: 'bankGraph',
    subgraphs: () => bankGraph(),
    operations: [
      'mutation { a: deposit(account: "acc2", cents: 1) { balanceCents } b: withdraw(account: "acc2", cents: 1000) { balanceCents } c: deposit(account: "acc2", cents: 3) { owner } }',
      'mutation { a: deposit(account: "nope", cents: 1) { balanceCents } }',
      'mutation { __typename n: notify(account: "acc3", text: "x") { __typename account { __typename owner } } }',
    ],
  },
  { graph: 'gateways', subgraphs: gatewaysBenchGraph, operations: [TWO_ROOT_QUERY] },
  { graph: 'bench', subgraphs: bench, operations: [BENCH_QUERY, TWO_ROOTS_QUERY] },
  { graph: 'planner', subgraphs: planner, operations: [PLANNER_QUERY] },
];

/**
 * Graphs the schema-driven generator runs over: entities across subgraphs, abstract types, @requires/@provides, @shareable, @override.
 * `answered`: the graph's generated operations fetch merging changes, so their answers are also compared over real subgraph servers.
 */
const GENERATED_GRAPHS: ReadonlyArray<{ graph: string; subgraphs: () => SubgraphOptions[]; answered?: true }> = [
  { graph: 'accounts', subgraphs: accountGraph, answered: true },
  { graph: 'music', subgraphs: musicGraph, answered: true },
  { graph: 'zoo', subgraphs: zooGraph, answered: true },
  { graph: 'parcels', subgraphs: parcelGraph, answered: true },
  { graph: 'vehicles', subgraphs: vehicleGraph, answered: true },
  { graph: 'warehouse', subgraphs: warehouseGraph, answered: true },
  { graph: 'recipes', subgraphs: recipeGraph, answered: true },
  { graph: 'library', subgraphs: libraryGraph, answered: true },
  { graph: 'loans', subgraphs: loanGraph },
  { graph: 'shop', subgraphs: shopGraph },
  { graph: 'staff', subgraphs: staffGraph },
  { graph: 'boards', subgraphs: boardsGraph },
  { graph: 'weather', subgraphs: weatherGraph },
  { graph: 'gateways-bench', subgraphs: gatewaysBenchGraph, answered: true },
];
const GENERATED_PER_GRAPH = 60;

/** The generated graphs marked `answered`. */
const ANSWERED_GRAPHS = GENERATED_GRAPHS.filter((entry) => entry.answered);

/** Hive's planner leaves out a field whose whole selection is skipped (its answer then lacks the field); Switchyard fetches it (`{ __typename }`), as the answer needs it. */
const SKIPPED_SELECTION = 'Hive leaves out a field whose whole selection is skipped';

/**
 * Generated operations where Switchyard plans more calls than Hive's planner
 * (printed by the test): key `graph #index` of the seeded generator, with
 * Switchyard's call count today, so a regression beyond it still fails.
 */
const GENERATED_EXCEPTIONS: Readonly<Record<string, { readonly calls: number; readonly why: string }>> = {
  'music #29': { calls: 2, why: SKIPPED_SELECTION },
  'zoo #33': { calls: 2, why: SKIPPED_SELECTION },
  'boards #3': { calls: 2, why: SKIPPED_SELECTION },
};

/** `@include`/`@skip` variables of the corpus: all true. */
const CONDITIONS = { c: true };

/** Subgraph requests of a plan; `multiFetch`: as `engine.enable_multi_fetch` sends them (one per subgraph of a Parallel node). */
function switchyardCalls(node: PlanNode | undefined, multiFetch = false): number {
  if (!node) return 0;
  if (node.kind === 'Fetch' || node.kind === 'Flatten') return 1;
  if (node.kind === 'Parallel' && multiFetch) {
    const schedule = scheduleParallel(node);
    return schedule.merged.length + schedule.rest.reduce((sum, child) => sum + switchyardCalls(child, true), 0);
  }
  return node.nodes.reduce((sum, child) => sum + switchyardCalls(child, multiFetch), 0);
}

interface HiveNode {
  readonly kind: string;
  readonly nodes?: readonly HiveNode[];
  readonly node?: HiveNode;
  readonly condition?: string;
  readonly ifClause?: HiveNode;
  readonly elseClause?: HiveNode;
}

/** Subgraph requests of Hive's plan; with `variables`, a `Condition` node counts only the branch those values take (else both). */
function hiveCalls(node: HiveNode | undefined, variables?: Record<string, boolean>): number {
  if (!node) return 0;
  switch (node.kind) {
    case 'Fetch':
    case 'BatchFetch':
      return 1;
    case 'Flatten':
      return hiveCalls(node.node, variables);
    case 'Condition':
      if (variables && node.condition !== undefined) return hiveCalls(variables[node.condition] ? node.ifClause : node.elseClause, variables);
      return hiveCalls(node.ifClause, variables) + hiveCalls(node.elseClause, variables);
    default:
      return (node.nodes ?? []).reduce((sum, child) => sum + hiveCalls(child, variables), 0);
  }
}

function nameOf(graph: string, operation: string): string {
  const name = /^\s*(?:query|mutation)\s+(\w+)/.exec(operation)?.[1];
  return `${graph}: ${name ?? operation.replace(/\s+/g, ' ').trim().slice(0, 60)}`;
}

describe('the plan-quality corpus', () => {
  it("never plans more subgraph calls than Hive's Rust planner, nor more with merging than without", () => {
    const totals = { switchyard: 0, unmerged: 0, hive: 0 };
    const above: Array<[string, number]> = [];
    const unplanned: string[] = [];
    for (const { graph, subgraphs, operations } of CORPUS) {
      const planned = plannerFor([...subgraphs()]);
      const hive = new QueryPlanner(planned.supergraphSdl);
      for (const operation of operations) {
        const ours = switchyardCalls(planned.plan(operation, CONDITIONS).node);
        const unmerged = switchyardCalls(buildQueryPlan(planned.index, parse(operation), undefined, CONDITIONS, { mergeFetches: false }).node);
        expect(ours, nameOf(graph, operation)).toBeLessThanOrEqual(unmerged);
        let theirs: number;
        try {
          theirs = hiveCalls(hive.plan(operation, undefined, new Set(), 0).node as HiveNode | undefined);
        } catch {
          // Hive's planner cannot plan it (the agreement test says which of its answers are wrong): not compared.
          unplanned.push(nameOf(graph, operation));
          continue;
        }
        if (ours > theirs) above.push([nameOf(graph, operation), ours - theirs]);
        totals.switchyard += ours;
        totals.unmerged += unmerged;
        totals.hive += theirs;
      }
    }
    console.info(
      `plan corpus: Switchyard ${totals.switchyard} subgraph calls (${totals.unmerged} without fetch merging), Hive Rust planner ${totals.hive}` +
        `; not planned by Hive's planner: ${unplanned.join('; ') || 'none'}`,
    );
    expect(above).toEqual([]);
    expect(totals.switchyard).toBeLessThanOrEqual(totals.hive);
  });

  it("plans generated operations with no more calls than Hive's Rust planner, nor than without merging", () => {
    const planned = plannerFor(gatewaysBenchGraph());
    const hive = new QueryPlanner(planned.supergraphSdl);
    const totals = { switchyard: 0, multiFetch: 0, unmerged: 0, hive: 0, fewer: 0 };
    const above: string[] = [];
    for (const operation of generated(100)) {
      const plan = planned.plan(operation);
      const ours = switchyardCalls(plan.node);
      const unmerged = switchyardCalls(buildQueryPlan(planned.index, parse(operation), undefined, {}, { mergeFetches: false }).node);
      expect(ours, operation).toBeLessThanOrEqual(unmerged);
      if (ours < unmerged) totals.fewer++;
      totals.switchyard += ours;
      totals.multiFetch += switchyardCalls(plan.node, true);
      totals.unmerged += unmerged;
      const theirs = hiveCalls(hive.plan(operation, undefined, new Set(), 0).node as HiveNode | undefined);
      if (ours > theirs) above.push(`${operation} (${ours} > ${theirs})`);
      totals.hive += theirs;
    }
    console.info(
      `generated corpus (100 operations): Switchyard ${totals.switchyard} subgraph calls (${totals.multiFetch} with engine.enable_multi_fetch, ` +
        `${totals.unmerged} without fetch merging; ${totals.fewer} operations merged), Hive Rust planner ${totals.hive}`,
    );
    expect(above).toEqual([]);
    expect(totals.switchyard).toBeLessThanOrEqual(totals.hive);
    expect(totals.fewer).toBeGreaterThan(10);
  });

  it("plans operations generated over each test graph (fragments, type conditions, @skip/@include) with no more calls than Hive's Rust planner", () => {
    const above: string[] = [];
    const report: string[] = [];
    const lines: string[] = [];
    for (const { graph, subgraphs } of GENERATED_GRAPHS) {
      const planned = plannerFor(subgraphs());
      const schema = readSupergraph(planned.supergraphSdl).apiSchema;
      const hive = new QueryPlanner(planned.supergraphSdl);
      const random = seeded(graph.length * 7919);
      const totals = { switchyard: 0, unmerged: 0, hive: 0, compared: 0, unplanned: 0 };
      for (let i = 0; i < GENERATED_PER_GRAPH; i++) {
        const { query, variables } = generateSchemaOperation(schema, random);
        const document = parse(query);
        expect(validate(schema, document), query).toEqual([]);
        const ours = switchyardCalls(planned.plan(query, variables).node);
        const unmerged = switchyardCalls(buildQueryPlan(planned.index, document, undefined, variables, { mergeFetches: false }).node);
        expect(ours, query).toBeLessThanOrEqual(unmerged);
        let theirs: number;
        try {
          theirs = hiveCalls(hive.plan(query, undefined, new Set(), 0).node as HiveNode | undefined, variables);
        } catch {
          totals.unplanned++;
          continue;
        }
        totals.compared++;
        totals.switchyard += ours;
        totals.unmerged += unmerged;
        totals.hive += theirs;
        const key = `${graph} #${i}`;
        const exception = GENERATED_EXCEPTIONS[key];
        if (ours > theirs) {
          const listed = exception && ours <= exception.calls ? ` [listed: ${exception.why}]` : '';
          report.push(`${key} (${ours} > ${theirs})${listed} ${JSON.stringify(variables)}\n${query}`);
          if (!listed) above.push(`${key} (${ours} > ${theirs})`);
        } else if (exception) {
          report.push(`${key}: listed as an exception but now within Hive's count (${ours} <= ${theirs}); remove it from GENERATED_EXCEPTIONS`);
        }
      }
      lines.push(
        `${graph}: Switchyard ${totals.switchyard} calls (${totals.unmerged} without merging), Hive ${totals.hive}, over ${totals.compared} operations (${totals.unplanned} not planned by Hive)`,
      );
      expect(totals.switchyard, graph).toBeLessThanOrEqual(totals.hive);
    }
    console.info(`generated corpus per graph (${GENERATED_PER_GRAPH} operations each):\n${lines.join('\n')}`);
    if (report.length) console.info(`Switchyard above Hive on generated operations:\n${report.join('\n\n')}`);
    expect(above).toEqual([]);
  });

  it('answers generated operations with merged plans exactly as with unmerged plans (real subgraph servers)', async () => {
    const lines: string[] = [];
    for (const { graph, subgraphs } of ANSWERED_GRAPHS) {
      const servers = await Promise.all(subgraphs().map((definition) => startSubgraph(definition)));
      const supergraphSdl = composeSubgraphs(servers.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs }))).supergraphSdl;
      const merged = await startTestRouter({ subgraphs: servers });
      const unmerged = await startTestRouter({ subgraphs: servers, plugins: [unmergedPlans(() => supergraphSdl)] });
      try {
        const planned = plannerFor(subgraphs());
        const schema = readSupergraph(planned.supergraphSdl).apiSchema;
        // The same operations as the plan-count test above (same seed).
        const random = seeded(graph.length * 7919);
        let compared = 0;
        let differing = 0;
        for (let i = 0; i < GENERATED_PER_GRAPH; i++) {
          const { query, variables } = generateSchemaOperation(schema, random);
          const ours = switchyardCalls(planned.plan(query, variables).node);
          const general = switchyardCalls(buildQueryPlan(planned.index, parse(query), undefined, variables, { mergeFetches: false }).node);
          // Only plans that merging changes can answer differently.
          if (ours === general) continue;
          const [a, b] = await Promise.all([merged.query({ query, variables }), unmerged.query({ query, variables })]);
          expect(a.status, query).toBe(200);
          expect(a.body, `${graph} #${i} ${JSON.stringify(variables)}\n${query}`).toEqual(b.body);
          compared++;
          if (a.body.errors) differing++;
        }
        lines.push(`${graph}: ${compared} merged operations answered alike (${differing} with errors)`);
        expect(compared).toBeGreaterThan(0);
      } finally {
        await Promise.all([merged.close(), unmerged.close()]);
        await Promise.all(servers.map((s) => s.close()));
      }
    }
    console.info(`generated answers, merged vs unmerged plans:\n${lines.join('\n')}`);
  }, 30_000);
});
