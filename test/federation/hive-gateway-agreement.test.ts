/**
 * Differential tests: the same operations on our federation test graphs sent
 * to Switchyard and to Hive Gateway (in-process, over the same supergraph and
 * the same subgraphs), expecting equal `data` and equal error paths. Where
 * Hive Gateway is wrong, the case says why and asserts the right answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphQLResponseBody } from '../../src/kernel/pipeline/stages.js';
import type { SubgraphOptions } from '../../src/testing/index.js';
import { accountGraph } from './graphs/accounts.js';
import { bankGraph } from './graphs/bank.js';
import { musicGraph } from './graphs/music.js';
import { parcelGraph } from './graphs/parcels.js';
import { recipeGraph } from './graphs/recipes.js';
import { vehicleGraph } from './graphs/vehicles.js';
import { warehouseGraph } from './graphs/warehouse.js';
import { zooGraph } from './graphs/zoo.js';
import { startFederatedGraph, type FederatedGraph } from './support/federated-graph.js';
import { startHiveGateway, type HiveGateway } from './support/hive-gateway.js';

/** One operation both gateways get. */
interface Operation {
  readonly query: string;
  readonly variables?: Record<string, unknown>;
}

/** An operation Hive Gateway answers wrongly: why, and the right answer (Switchyard's). */
interface HiveIsWrong extends Operation {
  readonly why: string;
  readonly expected: GraphQLResponseBody;
}

interface Comparison {
  readonly graph: string;
  readonly subgraphs: () => SubgraphOptions[];
  /**
   * Hive Gateway gets its own copy of the subgraphs: for graphs with state
   * (mutations), each gateway must start from the same state.
   */
  readonly separateSubgraphs?: boolean;
  readonly agree: readonly Operation[];
  readonly hiveIsWrong?: readonly HiveIsWrong[];
}

const COMPARISONS: readonly Comparison[] = [
  {
    graph: 'parcels (@requires)',
    subgraphs: parcelGraph,
    agree: [
      { query: '{ parcels { label price(currency: USD) { amount currency } } }' },
      { query: '{ parcel(id: "p1") { weight grams: weight(unit: GRAMS) price { amount } } }' },
      { query: '{ parcels { id hazardSurcharge duty insuranceCents } }' },
      { query: '{ cheapestParcel { label price(currency: USD) { amount } } }' },
    ],
  },
  {
    graph: 'music (@provides)',
    subgraphs: musicGraph,
    agree: [
      { query: '{ chart { title artist { name country } } }' },
      { query: '{ queue { __typename ... on Song { title } ... on Podcast { title host } } }' },
      { query: '{ onAir { __typename id title ... on Song { plays } } }' },
      { query: 'query($c: Boolean!) { albums { title artist @include(if: $c) { country } } }', variables: { c: true } },
    ],
    hiveIsWrong: [
      {
        why: 'Hive Gateway asks catalog for Artist.name, external there and provided only on Query.chart, and gets null',
        query: '{ albums { artist { name } } }',
        expected: { data: { albums: [{ artist: { name: 'Nina Simone' } }, { artist: { name: 'Fela Kuti' } }] } },
      },
      {
        why: 'Hive Gateway asks radio for titles it provides only on queue and onAir, not on history',
        query: '{ history { __typename title } }',
        expected: {
          data: {
            history: [
              { __typename: 'Podcast', title: 'Liner Notes' },
              { __typename: 'Song', title: 'Water No Get Enemy' },
            ],
          },
        },
      },
    ],
  },
  {
    graph: 'accounts (entity interfaces, @interfaceObject)',
    subgraphs: accountGraph,
    agree: [
      { query: '{ overdue { __typename id } }' },
      { query: '{ overdue { plan ... on User { name } ... on Team { seats email } } }' },
      { query: '{ overdue { email balanceCents } }' },
      { query: '{ accounts { id ... on User { tickets { subject } } } }' },
      { query: '{ account(id: "t1") { __typename email ... on Team { seats } ... on User { name } } }' },
    ],
    hiveIsWrong: [
      {
        why: 'Hive Gateway fails ("Unexpected error") to add interface object fields to objects its owner returned',
        query: '{ accounts { id plan } }',
        expected: {
          data: {
            accounts: [
              { id: 'u1', plan: 'PRO' },
              { id: 'u2', plan: 'FREE' },
              { id: 't1', plan: 'PRO' },
            ],
          },
        },
      },
      {
        why: 'Hive Gateway fails ("Unexpected error") to reach interface object fields from a concrete type in a third subgraph',
        query: '{ openTickets { requester { __typename email plan } } }',
        expected: {
          data: {
            openTickets: [{ requester: { __typename: 'User', email: 'bob@shop.biz', plan: 'FREE' } }, { requester: { __typename: 'User', email: 'ada@example.com', plan: 'PRO' } }],
          },
        },
      },
    ],
  },
  {
    graph: 'zoo (abstract types, union and interface intersections, __typename)',
    subgraphs: zooGraph,
    agree: [
      { query: '{ pets { __typename ... on Cat { name lives } ... on Parrot { name words } } }' },
      { query: '{ visitors { __typename ... on Cat { lives } ... on Dog { name goodBoy } ... on Parrot { words } } }' },
      { query: '{ visitors { ... on Animal { id name } } pets { ... on Animal { t: __typename name } } }' },
      { query: '{ animals { __typename name ... on Parrot { words } ... on Dog { goodBoy } } flyers { ... on Dog { goodBoy } ... on Parrot { name } } }' },
      { query: '{ pets { ... on Cat { vaccinated } ... on Dog { vaccinated } } flyers { name ... on Parrot { vaccinated } } }' },
      { query: '{ __typename }' },
    ],
  },
  {
    graph: 'recipes (enum and input intersections, @inaccessible enum value)',
    subgraphs: recipeGraph,
    agree: [
      { query: '{ recipes(filter: { maxMinutes: 60 }) { title cuisine inspiredBy } }' },
      { query: '{ recipe(id: "r3") { title cuisine } }' },
      { query: '{ recipes { title cuisine } }' },
      { query: 'query($f: RecipeFilter, $u: Unit!) { recipes(filter: $f) { title } shoppingList(filter: $f, unit: $u) }', variables: { f: { maxMinutes: 45 }, u: 'GRAM' } },
      { query: '{ convert(grams: 100, to: OUNCE) }' },
      { query: '{ recipes(filter: { vegan: true }) { title } }' },
    ],
  },
  {
    graph: 'vehicles (multiple, composite and non-resolvable keys, key hops)',
    subgraphs: vehicleGraph,
    agree: [
      { query: '{ vehicles { model tollsCents permit { zone validUntil } registeredIn { name } } }' },
      { query: '{ byPlate(plate: "XY-987") { vin model tollsCents } }' },
      { query: '{ openClaims { id policy { number insurer { name } premiumCents } } permits { number validUntil } }' },
    ],
  },
  {
    graph: 'warehouse (null propagation)',
    subgraphs: warehouseGraph,
    agree: [
      { query: '{ bin(id: "b1") { items { sku priceCents } } }' },
      { query: '{ warehouse bins { label featured { name priceCents } } }' },
      { query: '{ bin(id: "b2") { label items { sku name priceCents } } }' },
      { query: '{ bin(id: "b2") { label featured { sku priceCents } } warehouse }' },
    ],
    hiveIsWrong: [
      {
        why: 'Hive Gateway drops the list index from the error path (["bin","items","discount","percent"])',
        query: '{ bin(id: "b1") { items { sku discount { percent } } } }',
        expected: {
          data: {
            bin: {
              items: [
                { sku: 'x1', discount: null },
                { sku: 'x2', discount: null },
              ],
            },
          },
          errors: [
            {
              message: 'Cannot return null for non-nullable field Discount.percent.',
              path: ['bin', 'items', 0, 'discount', 'percent'],
            },
          ],
        },
      },
    ],
  },
  {
    graph: 'bank (mutations)',
    subgraphs: () => bankGraph(),
    separateSubgraphs: true,
    agree: [
      {
        query:
          'mutation { first: deposit(account: "acc1", cents: 100) { balanceCents owner } sent: notify(account: "acc1", text: "hi") { text account { balanceCents } } second: withdraw(account: "acc1", cents: 30) { balanceCents notices { text } } }',
      },
      {
        query:
          'mutation { a: deposit(account: "acc2", cents: 1) { balanceCents } b: withdraw(account: "acc2", cents: 1000) { balanceCents } c: deposit(account: "acc2", cents: 3) { owner } }',
      },
      { query: 'mutation { a: deposit(account: "nope", cents: 1) { balanceCents } }' },
      { query: 'mutation { __typename n: notify(account: "acc3", text: "x") { __typename account { __typename owner } } }' },
    ],
  },
];

function errorPaths(body: GraphQLResponseBody): string[] {
  return (body.errors ?? []).map((error) => JSON.stringify(error.path ?? null)).sort();
}

for (const comparison of COMPARISONS) {
  describe(`Switchyard and Hive Gateway on ${comparison.graph}`, () => {
    let switchyard: FederatedGraph;
    let hiveSubgraphs: FederatedGraph | undefined;
    let hive: HiveGateway;
    beforeAll(async () => {
      switchyard = await startFederatedGraph(comparison.subgraphs());
      if (comparison.separateSubgraphs) hiveSubgraphs = await startFederatedGraph(comparison.subgraphs());
      hive = await startHiveGateway((hiveSubgraphs ?? switchyard).supergraphSdl);
    });
    afterAll(async () => {
      await hive?.close();
      await Promise.all([switchyard?.close(), hiveSubgraphs?.close()]);
    });

    it('gives the same data and error paths for every operation, in order', async () => {
      for (const operation of comparison.agree) {
        const ours = (await switchyard.send({ query: operation.query, variables: operation.variables })).body;
        const theirs = await hive.query(operation.query, operation.variables);
        expect({ operation: operation.query, data: ours.data, errorPaths: errorPaths(ours) }).toEqual({
          operation: operation.query,
          data: theirs.data,
          errorPaths: errorPaths(theirs),
        });
      }
    });

    for (const wrong of comparison.hiveIsWrong ?? []) {
      it(`answers right where Hive Gateway is wrong: ${wrong.why}`, async () => {
        expect((await switchyard.send({ query: wrong.query, variables: wrong.variables })).body).toEqual(wrong.expected);
        const theirs = await hive.query(wrong.query, wrong.variables);
        expect({ data: theirs.data ?? null, errorPaths: errorPaths(theirs) }).not.toEqual({
          data: wrong.expected.data ?? null,
          errorPaths: errorPaths(wrong.expected),
        });
      });
    }
  });
}
