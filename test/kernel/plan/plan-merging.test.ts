/**
 * Fetch merging in the planner (src/kernel/plan/merge-fetches.ts): which
 * entity fetches become one call, which stay apart, and how the plan shows
 * a merged call.
 */
import { describe, expect, it, vi } from 'vitest';
import { benchSubgraphs } from '../../../bench/graph/subgraphs.js';
import { BENCH_QUERY } from '../../../bench/graph/operation.js';
import { FederationIndex } from '../../../src/kernel/graph/federation-index.js';
import { FetchGroup } from '../../../src/kernel/plan/fetch-group.js';
import { batchFetchGroups, mergeFetchGroups } from '../../../src/kernel/plan/merge-fetches.js';
import { SelectionTree } from '../../../src/kernel/plan/selection-tree.js';
import { gatewaysBenchGraph, TWO_ROOT_QUERY } from '../../federation/graphs/gateways-bench.js';
import { linkFederation } from '../../federation/support/sdl.js';
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
        '        { users { id username } }',
        '      },',
        '      Fetch(service: "products") {',
        '        { topProducts { name upc } }',
        '      }',
        '    },',
        '    Flatten(paths: ["users.@", "topProducts.@"]) {',
        '      Fetch(service: "reviews") {',
        '        { ... on User { __typename id } ... on Product { __typename upc } } =>',
        '        { ... on User { reviews { body product { upc reviews { id author { id reviews { body product { upc } } } } } } } ... on Product { reviews { body author { id reviews { product { upc } } } } } }',
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

  it('batches fetches of one wave that select one type differently as aliased `_entities` parts of one call', () => {
    const query = '{ topProducts { reviews { product { name } author { name reviews { product { price } } } } } }';
    const products = gateways.plan(query).fetches.filter((f) => f.subgraph === 'products' && f.fetchKind === 'entity');
    expect(products).toHaveLength(1);
    const [batch] = products;
    expect(batch!.parts?.map((part) => part.mergePath.join('.'))).toEqual(['topProducts.@.reviews.@.product', 'topProducts.@.reviews.@.author.reviews.@.product']);
    expect(batch!.operation).toBe(
      'query($r0: [_Any!]!, $r1: [_Any!]!) { _0: _entities(representations: $r0) { ... on Product { name } } _1: _entities(representations: $r1) { ... on Product { price } } }',
    );
    // Each part is the fetch it would have been alone.
    expect(batch!.parts?.[0]?.operation).toBe('query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { name } } }');
    expect(gateways.print(query)).toContain(
      [
        '      Flatten(paths: ["topProducts.@.reviews.@.product", "topProducts.@.reviews.@.author.reviews.@.product"]) {',
        '        Fetch(service: "products") {',
        '          _0(path: "topProducts.@.reviews.@.product") {',
        '            { ... on Product { __typename upc } } =>',
        '            { ... on Product { name } }',
        '          }',
        '          _1(path: "topProducts.@.reviews.@.author.reviews.@.product") {',
        '            { ... on Product { __typename upc } } =>',
        '            { ... on Product { price } }',
        '          }',
        '        }',
        '      },',
      ].join('\n'),
    );
  });

  it('declares in a batched call the client variables of every part, once', () => {
    const query =
      'query($lang: String) { users { reviews { product { title(lang: $lang) } } } topProducts { reviews { author { reviews { product { t: title(lang: $lang) name } } } } } }';
    const batch = gateways.plan(query).fetches.find((f) => f.subgraph === 'products' && f.parts)!;
    expect(batch.operation).toMatch(/^query\(\$r0: \[_Any!\]!, \$r1: \[_Any!\]!, \$lang: String\) \{ _0: _entities/);
    expect(batch.variableUsages).toEqual(['lang']);
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
    // Consecutive fields of one subgraph share a call only while nothing else is fetched for them: place's total
    // comes before cancel runs, so each has its own orders call and its own entity call.
    const consecutive = shop.plan('mutation { place(id: "1") { total } cancel(id: "2") { total } }');
    expect(consecutive.fetches.filter((f) => f.subgraph === 'orders')).toHaveLength(2);
    expect(consecutive.fetches.filter((f) => f.subgraph === 'billing').map((f) => f.mergePath)).toEqual([['place'], ['cancel']]);
    // Without selections from elsewhere they still share one call.
    expect(shop.plan('mutation { place(id: "1") { id } cancel(id: "2") { id } }').fetches).toHaveLength(1);
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

  it('keeps apart a group that selects a type like another group, when that group also selects it through its interface', () => {
    for (const order of [
      ['User', 'Node'],
      ['Node', 'User'],
    ]) {
      const root = new FetchGroup(0, 'a', 'root', 'query', [], 0);
      const both = new FetchGroup(1, 'b', 'entity', 'query', ['x', '1'], 0);
      for (const condition of order) {
        both.representation(condition, { kind: 'runtime' }).add([{ name: 'id', responseKey: 'id', children: undefined }]);
        both.tree.fragment(condition).add(condition === 'User' ? 'name' : 'email', condition === 'User' ? 'name' : 'email', [], false);
      }
      both.dependsOn.add(root);
      const user = entityGroup(2, 'User', 'name', [root]);
      // Merged, the second group's users would be asked for `... on Node { email }` too.
      expect(mergeFetchGroups(abstract.index, [root, both, user]), order.join(', ')).toEqual([root, both, user]);
    }
  });

  it('keeps apart groups with fields renamed by aliases', () => {
    const root = new FetchGroup(0, 'a', 'root', 'query', [], 0);
    const plain = entityGroup(1, 'User', 'name', [root]);
    const aliased = entityGroup(2, 'User', 'name', [root]);
    aliased.aliases.push({ path: [], alias: 'name__sy_0', responseKey: 'name' });
    expect(mergeFetchGroups(abstract.index, [root, plain, aliased])).toEqual([root, plain, aliased]);
  });

  it('does work linear in the number of groups (a client makes thousands with aliases), and still merges them all', () => {
    // What grows with the comparisons made: reading a group's selection text.
    const prints = vi.spyOn(SelectionTree.prototype, 'print');
    const printsFor = (n: number): number => {
      const root = new FetchGroup(0, 'a', 'root', 'query', [], 0);
      const groups = Array.from({ length: n }, (_, i) => entityGroup(i + 1, i % 2 === 0 ? 'User' : 'Team', 'name', [root]));
      prints.mockClear();
      const kept = mergeFetchGroups(abstract.index, [root, ...groups]);
      expect(kept).toEqual([root, groups[0]]);
      expect(groups[0]!.mergedWith).toHaveLength(n - 1);
      return prints.mock.calls.length;
    };
    const small = printsFor(250);
    const large = printsFor(2000);
    prints.mockRestore();
    // 8 times the groups: about 8 times the reads (every pair compared would be 64 times).
    expect(large / small).toBeLessThan(10);
  });

  it('keeps the fetches of hundreds of fragments on a union of entities linear to plan, merged into one call', () => {
    const members = 600;
    const union = plannerFor([
      {
        name: 'a',
        typeDefs: `${linkFederation('key')}
          type Query { all: [U] }
          union U = ${Array.from({ length: members }, (_, i) => `T${i}`).join(' | ')}
          ${Array.from({ length: members }, (_, i) => `type T${i} @key(fields: "id") { id: ID! }`).join('\n')}`,
      },
      {
        name: 'b',
        typeDefs: `${linkFederation('key')}
          ${Array.from({ length: members }, (_, i) => `type T${i} @key(fields: "id") { id: ID! y${i}: Int }`).join('\n')}`,
      },
    ]);
    // What grows with the comparisons made: asking which objects a type condition covers.
    const lookups = vi.spyOn(FederationIndex.prototype, 'possibleTypes');
    const query = (n: number) => `{ all { ${Array.from({ length: n }, (_, i) => `... on T${i} { y${i} }`).join(' ')} } }`;
    const countFor = (n: number): number => {
      lookups.mockClear();
      const plan = union.plan(query(n));
      expect(plan.fetches).toHaveLength(2);
      return lookups.mock.calls.length;
    };
    const small = countFor(60);
    const large = countFor(600);
    lookups.mockRestore();
    // 10 times the fragments: about 10 times the lookups (every pair compared would be 100 times).
    expect(large / small).toBeLessThan(14);
  });
});

describe('batchFetchGroups', () => {
  function group(id: number, subgraph: string, dependsOn: FetchGroup[] = [], scope = 0): FetchGroup {
    const made = new FetchGroup(id, subgraph, dependsOn.length === 0 ? 'root' : 'entity', 'query', dependsOn.length === 0 ? [] : ['x', String(id)], scope);
    for (const dependency of dependsOn) made.dependsOn.add(dependency);
    return made;
  }

  it('batches entity groups of one subgraph and wave, and rewires what waited for them to the batch', () => {
    const a = group(0, 'a');
    const c = group(1, 'c');
    const first = group(2, 'b', [a]);
    const second = group(3, 'b', [c]);
    const other = group(4, 'd', [a]);
    const after = group(5, 'd', [second]);
    const { groups, batches } = batchFetchGroups([a, c, first, second, other, after]);
    expect(groups).toEqual([a, c, first, other, after]);
    expect(batches.get(first)).toEqual([first, second]);
    // The batch waits for both parts' inputs; what waited for a part waits for the batch.
    expect([...first.dependsOn]).toEqual([a, c]);
    expect([...after.dependsOn]).toEqual([first]);
  });

  it('keeps apart groups of different waves, and of different mutation steps', () => {
    const root = group(0, 'a');
    const early = group(1, 'b', [root]);
    const middle = group(2, 'c', [early]);
    const late = group(3, 'b', [middle]);
    expect(batchFetchGroups([root, early, middle, late]).batches.size).toBe(0);
    const step1 = group(4, 'a', [], 0);
    const step2 = group(5, 'a', [], 1);
    const one = group(6, 'b', [step1], 0);
    const two = group(7, 'b', [step2], 1);
    expect(batchFetchGroups([step1, step2, one, two]).batches.size).toBe(0);
  });
});
