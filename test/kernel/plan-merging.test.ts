/**
 * Fetch merging in the planner (src/kernel/plan/merge-fetches.ts): which
 * entity fetches become one call, which stay apart, and how the plan shows
 * a merged call.
 */
import { describe, expect, it } from 'vitest';
import { benchSubgraphs } from '../../bench/graph/subgraphs.js';
import { BENCH_QUERY } from '../../bench/graph/operation.js';
import { FetchGroup } from '../../src/kernel/plan/fetch-group.js';
import { mergeFetchGroups } from '../../src/kernel/plan/merge-fetches.js';
import { gatewaysBenchGraph, TWO_ROOT_QUERY } from '../federation/graphs/gateways-bench.js';
import { linkFederation } from '../federation/support/sdl.js';
import { plannerFor } from './plan-helpers.js';

const gateways = plannerFor(gatewaysBenchGraph());
const bench = plannerFor(benchSubgraphs.map((s) => ({ name: s.name, typeDefs: s.sdl })));

describe('fetch merging in the planner', () => {
  it('plans the two-root-field query in 6 fetches: one reviews call for both root fields, then one per subgraph', () => {
    expect(gateways.plan(TWO_ROOT_QUERY).fetches).toHaveLength(6);
    expect(gateways.print(TWO_ROOT_QUERY)).toBe(
      [
        'QueryPlan {',
        '  Sequence {',
        '    Parallel {',
        '      Fetch(service: "accounts") {',
        '        { users { id username __typename } }',
        '      },',
        '      Fetch(service: "products") {',
        '        { topProducts { name __typename upc } }',
        '      }',
        '    },',
        '    Flatten(paths: ["users.@", "topProducts.@"]) {',
        '      Fetch(service: "reviews") {',
        '        { ... on User { __typename id } ... on Product { __typename upc } } =>',
        '        { ... on User { reviews { body product { upc reviews { id author { __typename id reviews { body product { __typename upc } } } } } } } ... on Product { reviews { body author { __typename id reviews { product { __typename upc } } } } } }',
        '      }',
        '    },',
        '    Parallel {',
        '      Flatten(paths: ["users.@.reviews.@.product.reviews.@.author", "topProducts.@.reviews.@.author"]) {',
        '        Fetch(service: "accounts") {',
        '          { ... on User { __typename id } } =>',
        '          { ... on User { name } }',
        '        }',
        '      },',
        '      Flatten(paths: ["users.@.reviews.@.product.reviews.@.author.reviews.@.product", "topProducts.@.reviews.@.author.reviews.@.product"]) {',
        '        Fetch(service: "products") {',
        '          { ... on Product { __typename upc } } =>',
        '          { ... on Product { name price weight } }',
        '        }',
        '      }',
        '    },',
        '    Flatten(paths: ["users.@.reviews.@.product.reviews.@.author.reviews.@.product", "topProducts.@.reviews.@.author.reviews.@.product"]) {',
        '      Fetch(service: "inventory") {',
        '        { ... on Product { __typename upc price weight } } =>',
        '        { ... on Product { inStock shippingEstimate } }',
        '      }',
        '    }',
        '  }',
        '}',
      ].join('\n'),
    );
  });

  it('keeps each path and its representations in the merged fetch node', () => {
    const reviews = gateways.plan(TWO_ROOT_QUERY).fetches.find((f) => f.subgraph === 'reviews')!;
    expect(reviews.entries?.map((e) => e.path.join('.'))).toEqual(['users.@', 'topProducts.@']);
    expect(reviews.entries?.map((e) => e.representations.map((r) => r.typeCondition))).toEqual([['User'], ['Product']]);
    expect(reviews.operation).toContain('_entities(representations: $representations)');
    expect(reviews.operation).not.toContain('_e1');
  });

  it('leaves the benchmark operation (one root field) at its 6 fetches', () => {
    expect(bench.plan(BENCH_QUERY, { first: 10 }).fetches).toHaveLength(6);
  });

  it('does not merge fetches of one subgraph in different waves', () => {
    // Products of reviews of top products (wave 2) and products of those reviews' authors' reviews (wave 4).
    const plan = gateways.plan('{ topProducts { reviews { product { name } author { name reviews { product { price } } } } } }');
    const products = plan.fetches.filter((f) => f.subgraph === 'products' && f.fetchKind === 'entity');
    expect(products.map((f) => f.entries)).toEqual([undefined, undefined]);
  });

  it('keeps entity fetches after different mutation steps apart', () => {
    const shop = plannerFor([
      {
        name: 'orders',
        typeDefs: `${linkFederation('key')}
          type Query { order(id: ID!): Order }
          type Mutation { place(id: ID!): Order cancel(id: ID!): Order }
          type Order @key(fields: "id") { id: ID! }`,
      },
      {
        name: 'billing',
        typeDefs: `${linkFederation('key')} type Mutation { refund(id: ID!): Boolean } type Order @key(fields: "id") { id: ID! total: Int }`,
      },
    ]);
    // place (orders), refund (billing), cancel (orders): three steps, run in order.
    const plan = shop.plan('mutation { place(id: "1") { total } refund(id: "1") cancel(id: "2") { total } }');
    const totals = plan.fetches.filter((f) => f.subgraph === 'billing' && f.fetchKind === 'entity');
    expect(totals.map((f) => f.mergePath)).toEqual([['place'], ['cancel']]);
    // Steps of one call (consecutive fields of one subgraph) may share one entity call.
    const together = shop.plan('mutation { place(id: "1") { total } cancel(id: "2") { total } }');
    expect(together.fetches.filter((f) => f.subgraph === 'billing').map((f) => f.entries?.map((e) => e.path))).toEqual([[['place'], ['cancel']]]);
  });
});

describe('mergeFetchGroups', () => {
  const abstract = plannerFor([
    {
      name: 'a',
      typeDefs: `${linkFederation('key')}
        type Query { nodes: [Node] }
        interface Node { id: ID! }
        type User implements Node @key(fields: "id") { id: ID! }
        type Team implements Node @key(fields: "id") { id: ID! }`,
    },
  ]);

  function entityGroup(id: number, condition: string, selection: string, dependsOn: FetchGroup[] = []): FetchGroup {
    const group = new FetchGroup(id, 'b', 'entity', 'query', ['x', String(id)], 0);
    group.representation(condition, { kind: 'runtime' }).add([{ name: 'id', responseKey: 'id', children: undefined }]);
    group.tree.fragment(condition).add(selection, selection, [], false);
    for (const dependency of dependsOn) group.dependsOn.add(dependency);
    return group;
  }

  it('merges groups of one wave with the same selection per type, and rewires what waited for them', () => {
    const root = new FetchGroup(0, 'a', 'root', 'query', [], 0);
    const first = entityGroup(1, 'User', 'name', [root]);
    const second = entityGroup(2, 'User', 'name', [root]);
    const third = entityGroup(3, 'Team', 'seats', [root]);
    const after = entityGroup(4, 'User', 'email', [second]);
    const kept = mergeFetchGroups(abstract.index, [root, first, second, third, after]);
    expect(kept).toEqual([root, first, after]);
    expect(first.mergedWith).toEqual([second, third]);
    expect([...after.dependsOn]).toEqual([first]);
    expect(first.tree.print()).toBe('{ ... on User { name } ... on Team { seats } }');
  });

  it('keeps apart groups that select one type differently, or through overlapping type conditions', () => {
    const root = new FetchGroup(0, 'a', 'root', 'query', [], 0);
    const byName = entityGroup(1, 'User', 'name', [root]);
    const byEmail = entityGroup(2, 'User', 'email', [root]);
    const byInterface = entityGroup(3, 'Node', 'name', [root]);
    expect(mergeFetchGroups(abstract.index, [root, byName, byEmail, byInterface])).toEqual([root, byName, byEmail, byInterface]);
  });

  it('keeps apart groups with fields renamed by aliases', () => {
    const root = new FetchGroup(0, 'a', 'root', 'query', [], 0);
    const plain = entityGroup(1, 'User', 'name', [root]);
    const aliased = entityGroup(2, 'User', 'name', [root]);
    aliased.aliases.push({ path: [], alias: 'name__sy_0', responseKey: 'name' });
    expect(mergeFetchGroups(abstract.index, [root, plain, aliased])).toEqual([root, plain, aliased]);
  });
});
