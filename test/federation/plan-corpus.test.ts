/**
 * The plan-quality corpus: for every operation of the differential tests
 * (hive-gateway-agreement.test.ts), the benchmark operations and the
 * two-root-field operation, Switchyard's plan makes no more subgraph calls
 * than Hive's Rust query planner (@graphql-hive/router-query-planner) and,
 * with fetch merging, never more than without it. Prints the totals of both
 * planners. Answers are compared with Hive Gateway's in
 * hive-gateway-agreement.test.ts and with the unmerged plan's in
 * fetch-merging.test.ts.
 */
import { QueryPlanner } from '@graphql-hive/router-query-planner';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
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
import { musicGraph } from './graphs/music.js';
import { parcelGraph } from './graphs/parcels.js';
import { recipeGraph } from './graphs/recipes.js';
import { vehicleGraph } from './graphs/vehicles.js';
import { warehouseGraph } from './graphs/warehouse.js';
import { zooGraph } from './graphs/zoo.js';
import { plannerFor } from '../kernel/plan-helpers.js';

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
  readonly ifClause?: HiveNode;
  readonly elseClause?: HiveNode;
}

function hiveCalls(node: HiveNode | undefined): number {
  if (!node) return 0;
  switch (node.kind) {
    case 'Fetch':
    case 'BatchFetch':
      return 1;
    case 'Flatten':
      return hiveCalls(node.node);
    case 'Condition':
      return hiveCalls(node.ifClause) + hiveCalls(node.elseClause);
    default:
      return (node.nodes ?? []).reduce((sum, child) => sum + hiveCalls(child), 0);
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
});
