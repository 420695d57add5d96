/**
 * Library loans, a graph built around `@override`: `loans` took `fineCents`
 * and the `overdueCount` root field over from `legacy`, whose stale answers
 * must never reach a client; `tier` overrides a subgraph that does not exist.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const MEMBERS = [
  { id: 'm1', name: 'Iris' },
  { id: 'm2', name: 'Omar' },
];

/** The old system: still owns names; its fines and counts are stale. */
export function legacySubgraph(): SubgraphOptions {
  return {
    name: 'legacy',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { members: [Member!]! overdueCount: Int! }
      type Member @key(fields: "id") { id: ID! name: String! fineCents: Int! }
    `,
    resolvers: {
      Query: { members: () => MEMBERS, overdueCount: () => -1 },
      Member: { __resolveReference: (ref: { id: string }) => MEMBERS.find((m) => m.id === ref.id) ?? null, fineCents: () => -1 },
    },
  };
}

/** The new system: fines and counts, overriding `legacy`. */
export function loansSubgraph(): SubgraphOptions {
  const fines = new Map([
    ['m1', 0],
    ['m2', 250],
  ]);
  return {
    name: 'loans',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'override')}
      type Query { overdueCount: Int! @override(from: "legacy") }
      type Member @key(fields: "id") {
        id: ID!
        fineCents: Int! @override(from: "legacy")
        tier: String! @override(from: "archive")
      }
    `,
    resolvers: {
      Query: { overdueCount: () => 1 },
      Member: {
        __resolveReference: (ref: { id: string }) => ref,
        fineCents: (m: { id: string }) => fines.get(m.id) ?? 0,
        tier: (m: { id: string }) => (m.id === 'm1' ? 'gold' : 'basic'),
      },
    },
  };
}

export function loanGraph(): SubgraphOptions[] {
  return [legacySubgraph(), loansSubgraph()];
}
