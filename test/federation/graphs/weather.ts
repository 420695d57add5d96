/**
 * Weather, a graph built around `@shareable`: both subgraphs serve the
 * `stations` root field and the `Reading` value type (no key), each knowing
 * some of its fields; a reading's other fields come from re-fetching its
 * parent station in the other subgraph.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const STATIONS = [
  { id: 'st1', name: 'Harbour', reading: { celsius: 14.5, observedAt: '06:00', humidity: 81, wind: { knots: 12, direction: 'NW' } } },
  { id: 'st2', name: 'Summit', reading: { celsius: -3, observedAt: '06:10', humidity: 40, wind: { knots: 35, direction: 'N' } } },
];

const byId = (ref: { id: string }) => STATIONS.find((s) => s.id === ref.id) ?? null;

/** Observations: names, readings with their time and wind speed. */
export function observationsSubgraph(): SubgraphOptions {
  return {
    name: 'observations',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { stations: [Station!]! @shareable units: String! }
      type Station @key(fields: "id") { id: ID! name: String! @shareable latest: Reading @shareable }
      type Reading @shareable { celsius: Float! observedAt: String! wind: Wind! }
      type Wind @shareable { knots: Int! }
    `,
    resolvers: {
      Query: { stations: () => STATIONS, units: () => 'metric' },
      Station: { __resolveReference: byId, latest: (s: (typeof STATIONS)[number]) => s.reading },
    },
  };
}

/** Forecasts: the same stations and readings, with humidity, wind direction and the outlook. */
export function forecastsSubgraph(): SubgraphOptions {
  return {
    name: 'forecasts',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { stations: [Station!]! @shareable }
      type Station @key(fields: "id") { id: ID! name: String! @shareable latest: Reading @shareable outlook: [String!]! }
      type Reading @shareable { celsius: Float! humidity: Int! wind: Wind! }
      type Wind @shareable { direction: String! }
    `,
    resolvers: {
      Query: { stations: () => STATIONS },
      Station: {
        __resolveReference: byId,
        latest: (s: (typeof STATIONS)[number]) => s.reading,
        outlook: (s: { id: string }) => (s.id === 'st1' ? ['rain', 'sun'] : ['snow']),
      },
    },
  };
}

export function weatherGraph(): SubgraphOptions[] {
  return [observationsSubgraph(), forecastsSubgraph()];
}
