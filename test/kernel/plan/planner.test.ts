import { describe, expect, it } from 'vitest';
import { demoSubgraphs } from '../../../examples/demo/subgraphs.js';
import { boardsGraph } from '../../federation/graphs/boards.js';
import { plannerFor } from './plan-helpers.js';

const demo = plannerFor(demoSubgraphs);

describe('the query planner', () => {
  it('sends root fields of one subgraph in one fetch', () => {
    expect(demo.print('{ me { name } users { id } }')).toBe(['QueryPlan {', '  Fetch(service: "accounts") {', '    { me { name } users { id } }', '  }', '}'].join('\n'));
  });

  it('fetches root fields of different subgraphs in parallel', () => {
    const plan = demo.plan('{ me { name } topProducts { name } }');
    expect(plan.node?.kind).toBe('Parallel');
    expect(plan.fetches.map((f) => f.subgraph).sort()).toEqual(['accounts', 'products']);
  });

  it('jumps to another subgraph through the entity key and runs independent jumps in parallel', () => {
    expect(demo.print('{ topProducts { name shippingEstimate reviews { author { username name } } } }')).toBe(
      [
        'QueryPlan {',
        '  Sequence {',
        '    Fetch(service: "products") {',
        '      { topProducts { name upc price weight } }',
        '    },',
        '    Parallel {',
        '      Flatten(path: "topProducts.@") {',
        '        Fetch(service: "inventory") {',
        '          { ... on Product { __typename upc price weight } } =>',
        '          { ... on Product { shippingEstimate } }',
        '        }',
        '      },',
        '      Sequence {',
        '        Flatten(path: "topProducts.@") {',
        '          Fetch(service: "reviews") {',
        '            { ... on Product { __typename upc } } =>',
        '            { ... on Product { reviews { author { username id } } } }',
        '          }',
        '        },',
        '        Flatten(path: "topProducts.@.reviews.@.author") {',
        '          Fetch(service: "accounts") {',
        '            { ... on User { __typename id } } =>',
        '            { ... on User { name } }',
        '          }',
        '        }',
        '      }',
        '    }',
        '  }',
        '}',
      ].join('\n'),
    );
  });

  it('fetches @requires fields before the field that needs them and sends them in the representation', () => {
    const plan = demo.plan('{ topProducts { shippingEstimate } }');
    const inventory = plan.fetches.find((f) => f.subgraph === 'inventory')!;
    expect(inventory.representations?.[0]?.fields.map((f) => f.name)).toEqual(['upc', 'price', 'weight']);
    expect(plan.fetches.find((f) => f.subgraph === 'products')!.selectionSet).toBe('{ topProducts { upc price weight } }');
  });

  it('uses @provides instead of jumping for a field the parent subgraph provides', () => {
    const plan = demo.plan('{ topProducts { reviews { author { username } } } }');
    expect(plan.fetches.map((f) => f.subgraph)).toEqual(['products', 'reviews']);
  });

  it('jumps for an @external field that is not provided on the path', () => {
    const plan = demo.plan('{ me { reviews { author { name } } } }');
    expect(plan.fetches.map((f) => f.subgraph)).toEqual(['accounts', 'reviews', 'accounts']);
  });

  it('leaves out fields excluded by @skip and @include for the given variable values', () => {
    const query = 'query($withReviews: Boolean!) { me { name reviews @include(if: $withReviews) { body } } }';
    expect(demo.plan(query, { withReviews: false }).fetches.map((f) => f.subgraph)).toEqual(['accounts']);
    expect(demo.plan(query, { withReviews: true }).fetches.map((f) => f.subgraph)).toEqual(['accounts', 'reviews']);
  });

  it('keeps the client aliases and picks an internal alias when the key field name is taken', () => {
    const plan = demo.plan('{ topProducts { upc: name reviews { body } } }');
    const products = plan.fetches[0]!;
    expect(products.selectionSet).toBe('{ topProducts { upc: name __sy_upc: upc } }');
    expect(plan.fetches[1]!.representations?.[0]?.fields).toEqual([{ name: 'upc', responseKey: '__sy_upc', children: undefined }]);
  });

  it('inlines named fragments and merges fields selected twice', () => {
    const plan = demo.plan('fragment P on Product { name } { topProducts { ...P name price } }');
    expect(plan.fetches[0]!.selectionSet).toBe('{ topProducts { name price } }');
  });

  it('declares only the variables each subgraph operation uses', () => {
    const plan = demo.plan('query Q($upc: String!, $id: ID!) { product(upc: $upc) { name } user(id: $id) { name } }');
    const products = plan.fetches.find((f) => f.subgraph === 'products')!;
    expect(products.operation).toBe('query Q__products__0($upc: String!) { product(upc: $upc) { name } }');
  });

  it('answers introspection fields itself', () => {
    const plan = demo.plan('{ __schema { queryType { name } } me { name } }');
    expect(plan.fetches.map((f) => f.subgraph)).toEqual(['accounts']);
    expect(plan.introspection).toBeDefined();
  });
});

const bank = plannerFor([
  {
    name: 'ledger',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query { balance: Int }
      type Mutation { deposit(amount: Int!): Account withdraw(amount: Int!): Account }
      type Account @key(fields: "id") { id: ID! balance: Int }
    `,
  },
  {
    name: 'audit',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Mutation { note(text: String!): Boolean }
      type Account @key(fields: "id") { id: ID! history: [String] }
    `,
  },
]);

describe('mutation plans', () => {
  it('run root mutation fields one after the other, each with its entity jumps before the next', () => {
    expect(bank.print('mutation { a: deposit(amount: 1) { history } n: note(text: "x") b: withdraw(amount: 2) { balance } }')).toBe(
      [
        'QueryPlan {',
        '  Sequence {',
        '    Fetch(service: "ledger") {',
        '      mutation { a: deposit(amount: 1) { id } }',
        '    },',
        '    Flatten(path: "a") {',
        '      Fetch(service: "audit") {',
        '        { ... on Account { __typename id } } =>',
        '        { ... on Account { history } }',
        '      }',
        '    },',
        '    Fetch(service: "audit") {',
        '      mutation { n: note(text: "x") }',
        '    },',
        '    Fetch(service: "ledger") {',
        '      mutation { b: withdraw(amount: 2) { balance } }',
        '    }',
        '  }',
        '}',
      ].join('\n'),
    );
  });

  it('sends consecutive mutation fields of one subgraph in one call, in order', () => {
    const plan = bank.plan('mutation { a: deposit(amount: 1) { id } b: withdraw(amount: 2) { id } }');
    expect(plan.fetches).toHaveLength(1);
    expect(plan.fetches[0]!.selectionSet).toBe('{ a: deposit(amount: 1) { id } b: withdraw(amount: 2) { id } }');
  });
});

describe('partial unions in the plan', () => {
  const boards = plannerFor(boardsGraph());
  const notes = 'notes { __typename ... on Text { body } ... on Sketch { strokes } ... on Voice { seconds } }';

  it('sends only the members every subgraph that could serve the union has', () => {
    const plan = boards.plan(`{ kitchenBoard { panel { ${notes} } } board { panel { ${notes} } } }`);
    expect(plan.fetches.map((f) => f.selectionSet)).toEqual([
      '{ kitchenBoard { panel { notes { __typename ... on Text { body } } } } board { panel { notes { __typename ... on Text { body } } } } }',
    ]);
  });

  it('sends every member of the only subgraph that can serve the union', () => {
    const door = boards.plan(`{ fridgeDoor { ${notes} } }`);
    expect(door.fetches.map((f) => f.selectionSet)).toEqual(['{ fridgeDoor { notes { __typename ... on Text { body } ... on Sketch { strokes } } } }']);
    const archive = boards.plan(`{ kitchenBoard { archive { ${notes} } } }`);
    expect(archive.fetches.find((f) => f.subgraph === 'garage')!.selectionSet).toContain('... on Voice { seconds }');
  });
});
