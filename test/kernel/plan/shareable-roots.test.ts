/**
 * Which subgraph a root field several subgraphs resolve goes to: the one
 * whose fetch it can share with other root fields, as `switchyard plan`
 * prints it.
 */
import { describe, expect, it } from 'vitest';
import { boardsGraph } from '../../federation/graphs/boards.js';
import { weatherGraph } from '../../federation/graphs/weather.js';
import { linkFederation } from '../../federation/support/sdl.js';
import { plannerFor } from './plan-helpers.js';

const weather = plannerFor(weatherGraph());
const boards = plannerFor(boardsGraph());

/** Two subgraphs that both resolve `Mutation.ping`; `bump` is only in tally, `note` only in audit. */
const counters = plannerFor([
  {
    name: 'audit',
    typeDefs: `${linkFederation('shareable')} type Query { notes: [String!]! } type Mutation { ping: String! @shareable note(text: String!): String! }`,
  },
  {
    name: 'tally',
    typeDefs: `${linkFederation('shareable')} type Query { count: Int! } type Mutation { ping: String! @shareable bump: Int! }`,
  },
]);

/** `Detail` is a value type every subgraph shares; only beta and gamma know `Detail.y`, and only gamma `Item.c`. */
const items = plannerFor([
  {
    name: 'alpha',
    typeDefs: `${linkFederation('key', 'shareable')} type Query { items: [Item!]! } type Item @key(fields: "id") { id: ID! detail: Detail @shareable } type Detail @shareable { x: Int }`,
  },
  {
    name: 'beta',
    typeDefs: `${linkFederation('key', 'shareable')} type Item @key(fields: "id") { id: ID! detail: Detail @shareable b: Int } type Detail @shareable { x: Int y: Int }`,
  },
  {
    name: 'gamma',
    typeDefs: `${linkFederation('key', 'shareable')} type Item @key(fields: "id") { id: ID! detail: Detail @shareable c: Int } type Detail @shareable { x: Int y: Int }`,
  },
]);

const lines = (...text: string[]) => text.join('\n');

describe('root fields several subgraphs resolve', () => {
  it('rides along with the fetch of a root field only one subgraph has, whichever comes first', () => {
    const oneFetch = (fields: string) => lines('QueryPlan {', '  Fetch(service: "observations") {', `    { ${fields} }`, '  }', '}');
    expect(weather.print('{ stations { id } units }')).toBe(oneFetch('stations { id } units'));
    expect(weather.print('{ units stations { id } }')).toBe(oneFetch('units stations { id }'));
    expect(boards.print('{ board { id } kitchenBoard { id } }')).toBe(
      lines('QueryPlan {', '  Fetch(service: "kitchen") {', '    { board { id } kitchenBoard { id } }', '  }', '}'),
    );
  });

  it('takes the entity jump a shared fetch needs when that saves a call', () => {
    // forecasts alone would need a second root call for `units`; observations needs one entity call instead.
    const plan = weather.plan('{ stations { latest { celsius humidity observedAt } outlook } units }');
    expect(plan.node?.kind).toBe('Sequence');
    expect(plan.fetches.map((f) => [f.subgraph, f.fetchKind, f.rootFields ?? f.selectionSet])).toEqual([
      ['observations', 'root', ['stations', 'units']],
      ['forecasts', 'entity', '{ ... on Station { latest { humidity } outlook } }'],
    ]);
  });

  it('keeps separate parallel fetches when sharing one would not save a call', () => {
    // `outlook` is only in forecasts: sharing observations' fetch would add an entity call after it.
    expect(weather.print('{ stations { outlook } units }')).toBe(
      lines(
        'QueryPlan {',
        '  Parallel {',
        '    Fetch(service: "forecasts") {',
        '      { stations { outlook } }',
        '    },',
        '    Fetch(service: "observations") {',
        '      { units }',
        '    }',
        '  }',
        '}',
      ),
    );
  });

  it('joins one of two fetches that root fields only one subgraph has force', () => {
    const plan = boards.plan('{ kitchenBoard { id } board { id } garageBoard { id } }');
    expect(plan.node?.kind).toBe('Parallel');
    expect(plan.fetches).toHaveLength(2);
  });

  it('sends a mutation field with its neighbour in order, never reordering the fields', () => {
    // `ping` follows `bump`: it joins tally's call.
    expect(counters.print('mutation { a: bump b: ping }')).toBe(lines('QueryPlan {', '  Fetch(service: "tally") {', '    mutation { a: bump b: ping }', '  }', '}'));
    // `ping` precedes `note`: it joins audit's call.
    expect(counters.print('mutation { a: ping b: note(text: "x") }')).toBe(
      lines('QueryPlan {', '  Fetch(service: "audit") {', '    mutation { a: ping b: note(text: "x") }', '  }', '}'),
    );
    // Between fields of two subgraphs, `ping` joins one of their calls: two calls, run in the fields' order.
    for (const operation of ['mutation { a: bump b: ping c: note(text: "x") }', 'mutation { a: note(text: "x") b: ping c: bump }']) {
      const plan = counters.plan(operation);
      expect(plan.node?.kind, operation).toBe('Sequence');
      expect(plan.fetches, operation).toHaveLength(2);
      expect(
        plan.fetches.flatMap((f) => f.rootFields),
        operation,
      ).toEqual(['a', 'b', 'c']);
    }
    // A field cannot join a call across another subgraph's field in between: three calls, in order.
    expect(counters.plan('mutation { a: note(text: "x") b: bump c: note(text: "y") }').fetches.map((f) => f.subgraph)).toEqual(['audit', 'tally', 'audit']);
  });

  it('re-fetches a nested shareable path in the subgraph an entity fetch there already goes to', () => {
    // `detail.y` is in beta and gamma: it joins gamma's fetch for `c` instead of opening one to beta.
    const plan = items.plan('{ items { c detail { y } } }');
    expect(plan.fetches.map((f) => [f.subgraph, f.fetchKind])).toEqual([
      ['alpha', 'root'],
      ['gamma', 'entity'],
    ]);
    expect(plan.fetches[1]!.selectionSet).toBe('{ ... on Item { c detail { y } } }');
    expect(items.plan('{ items { b detail { y } } }').fetches.map((f) => f.subgraph)).toEqual(['alpha', 'beta']);
  });
});
