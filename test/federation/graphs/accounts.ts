/**
 * Accounts, a graph built around entity interfaces and interface objects:
 * `identity` owns the `Account` interface (with a `@key`) and its
 * implementations, `billing` adds fields to every account as an
 * `@interfaceObject` (one of them requiring the email), `support` extends one
 * implementation (`User`) only.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const ACCOUNTS = [
  { __typename: 'User', id: 'u1', email: 'ada@example.com', name: 'Ada' },
  { __typename: 'User', id: 'u2', email: 'bob@shop.biz', name: 'Bob' },
  { __typename: 'Team', id: 't1', email: 'ops@example.com', seats: 12 },
];
const BALANCES = new Map([
  ['u1', { plan: 'PRO', balanceCents: 0 }],
  ['u2', { plan: 'FREE', balanceCents: 4500 }],
  ['t1', { plan: 'PRO', balanceCents: 12000 }],
]);

const byId = (id: string) => ACCOUNTS.find((a) => a.id === id) ?? null;

/** Owns the `Account` entity interface and its implementations. */
export function identitySubgraph(): SubgraphOptions {
  return {
    name: 'identity',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { accounts: [Account!]! account(id: ID!): Account }
      interface Account @key(fields: "id") { id: ID! email: String! }
      type User implements Account @key(fields: "id") { id: ID! email: String! name: String! }
      type Team implements Account @key(fields: "id") { id: ID! email: String! seats: Int! }
    `,
    resolvers: {
      Query: { accounts: () => ACCOUNTS, account: (_: unknown, { id }: { id: string }) => byId(id) },
      Account: {
        __resolveReference: (ref: { id: string }) => byId(ref.id),
        __resolveType: (account: { __typename: string }) => account.__typename,
      },
      User: { __resolveReference: (ref: { id: string }) => byId(ref.id) },
      Team: { __resolveReference: (ref: { id: string }) => byId(ref.id) },
    },
  };
}

/**
 * Adds billing fields to every account without knowing its implementations.
 * With `risk`, also a field that requires the account's email: compose that
 * variant with @apollo/composition (the guild's composition 0.27 drops the
 * `external: true` of `email` on an interface object, so the supergraph wrongly
 * says billing resolves the email).
 */
export function billingSubgraph({ risk = false } = {}): SubgraphOptions {
  return {
    name: 'billing',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'interfaceObject', 'external', 'requires')}
      type Query { overdue: [Account!]! }
      type Account @key(fields: "id") @interfaceObject {
        id: ID!
        plan: Plan!
        balanceCents: Int!
        ${risk ? 'email: String! @external risk: String! @requires(fields: "email")' : ''}
      }
      enum Plan { FREE PRO }
    `,
    resolvers: {
      Query: {
        overdue: () =>
          [...BALANCES]
            .filter(([, b]) => b.balanceCents > 0)
            .sort(([, a], [, b]) => b.balanceCents - a.balanceCents)
            .map(([id, b]) => ({ id, ...b })),
      },
      Account: {
        __resolveReference: (ref: { id: string; email?: string }) => {
          const balance = BALANCES.get(ref.id);
          return balance ? { ...ref, ...balance } : null;
        },
        risk: (account: { email: string }) => (account.email.endsWith('.biz') ? 'HIGH' : 'LOW'),
      },
    },
  };
}

/** Support tickets; extends `User` only. */
export function supportSubgraph(): SubgraphOptions {
  const tickets = [
    { subject: 'Cannot log in', userId: 'u2' },
    { subject: 'Invoice copy', userId: 'u1' },
  ];
  return {
    name: 'support',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { openTickets: [Ticket!]! }
      type Ticket { subject: String! requester: User! }
      type User @key(fields: "id") { id: ID! tickets: [Ticket!]! }
    `,
    resolvers: {
      Query: { openTickets: () => tickets },
      Ticket: { requester: (ticket: { userId: string }) => ({ id: ticket.userId }) },
      User: {
        __resolveReference: (ref: { id: string }) => ref,
        tickets: (user: { id: string }) => tickets.filter((t) => t.userId === user.id),
      },
    },
  };
}

export function accountGraph(): SubgraphOptions[] {
  return [identitySubgraph(), billingSubgraph(), supportSubgraph()];
}

/** The account graph with billing's `risk`, which requires the email (compose with @apollo/composition). */
export function accountGraphWithRisk(): SubgraphOptions[] {
  return [identitySubgraph(), billingSubgraph({ risk: true }), supportSubgraph()];
}
