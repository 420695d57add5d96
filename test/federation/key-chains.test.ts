/**
 * Keys reachable only through other keys: a parcel is known by its id in
 * `orders`, `labels` turns the id into a tracking number, `carrier` turns
 * the tracking number into a route code, and `routes` answers by route
 * code alone. Reaching `Parcel.eta` from `orders` takes three entity hops
 * before the fourth, as composition allows; the planner must find them
 * (it looked one hop ahead and answered 500 QUERY_PLANNING_FAILED).
 */
import { describe, expect, it } from 'vitest';
import type { SubgraphOptions } from '../../src/testing/index.js';
import { plannerFor } from '../kernel/plan/plan-helpers.js';
import { linkFederation } from './support/sdl.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const PARCELS = [
  { id: 'p1', tracking: 'T-1', route: 'R-NORTH', eta: 'Monday' },
  { id: 'p2', tracking: 'T-2', route: 'R-SOUTH', eta: 'Friday' },
];

function keyChain(): SubgraphOptions[] {
  const by = <K extends keyof (typeof PARCELS)[number]>(field: K) => ({
    __resolveReference: (ref: Record<string, string>) => PARCELS.find((parcel) => parcel[field] === ref[field]) ?? null,
  });
  return [
    {
      name: 'orders',
      typeDefs: `${linkFederation('key', 'shareable')}
        type Query { parcels: [Parcel!]! }
        type Parcel @key(fields: "id") { id: ID! weight: Int }`,
      resolvers: { Query: { parcels: () => PARCELS.map(({ id }) => ({ id, weight: 2 })) }, Parcel: by('id') },
    },
    {
      name: 'labels',
      typeDefs: `${linkFederation('key', 'shareable')}
        type Parcel @key(fields: "id") { id: ID! tracking: String! @shareable }`,
      resolvers: { Parcel: by('id') },
    },
    {
      name: 'carrier',
      typeDefs: `${linkFederation('key', 'shareable')}
        type Parcel @key(fields: "tracking") { tracking: String! @shareable route: String! @shareable }`,
      resolvers: { Parcel: by('tracking') },
    },
    {
      name: 'routes',
      typeDefs: `${linkFederation('key', 'shareable')}
        type Parcel @key(fields: "route") { route: String! @shareable eta: String! @shareable }`,
      resolvers: { Parcel: by('route') },
    },
  ];
}

const graph = useFederatedGraph(keyChain);

describe('keys reachable only through other keys', () => {
  it('answers a field three key hops away, calling each subgraph of the chain once', async () => {
    expect(await graph().query('{ parcels { id eta } }')).toEqual({
      data: {
        parcels: [
          { id: 'p1', eta: 'Monday' },
          { id: 'p2', eta: 'Friday' },
        ],
      },
    });
    expect(['orders', 'labels', 'carrier', 'routes'].map((name) => graph().calls(name).length)).toEqual([1, 1, 1, 1]);
  });

  it('stops as soon as the chain has what the client asked for', async () => {
    expect(await graph().query('{ parcels { tracking route } }')).toEqual({
      data: {
        parcels: [
          { tracking: 'T-1', route: 'R-NORTH' },
          { tracking: 'T-2', route: 'R-SOUTH' },
        ],
      },
    });
    expect(graph().calls('routes')).toHaveLength(0);
  });
});

describe('a key chain beside a shorter way', () => {
  it('fetches the field from a subgraph that serves it at the root rather than through three key hops', () => {
    const planner = plannerFor([
      ...keyChain().map(({ name, typeDefs }) => ({ name, typeDefs: typeDefs.replace('parcels: [Parcel!]!', 'parcels: [Parcel!]! @shareable') })),
      {
        name: 'tracker',
        typeDefs: `${linkFederation('key', 'shareable')}
          type Query { parcels: [Parcel!]! @shareable }
          type Parcel @key(fields: "id", resolvable: false) { id: ID! eta: String! @shareable }`,
      },
    ]);
    // `weight` only orders has; `eta`, tracker at the root or routes three hops after orders.
    expect(planner.print('{ parcels { weight eta } }')).toBe(
      [
        'QueryPlan {',
        '  Parallel {',
        '    Fetch(service: "orders") {',
        '      { parcels { weight } }',
        '    },',
        '    Fetch(service: "tracker") {',
        '      { parcels { eta } }',
        '    }',
        '  }',
        '}',
      ].join('\n'),
    );
  });
});
