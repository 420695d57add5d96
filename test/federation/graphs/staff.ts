/**
 * Staff records, a graph built around `@inaccessible`: a field, a type, an
 * argument and a key field clients must not see; `payroll` still requires the
 * hidden salary and looks employees up by the hidden badge number.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const EMPLOYEES = [
  { id: 'e1', badge: 'B-100', name: 'Kofi', salaryCents: 500000, contractor: false },
  { id: 'e2', badge: 'B-200', name: 'Lena', salaryCents: 420000, contractor: true },
];

export function directorySubgraph(): SubgraphOptions {
  return {
    name: 'directory',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'inaccessible', 'shareable')}
      type Query {
        employees(includeContractors: Boolean = true @inaccessible): [Employee!]!
        audit: AuditLog @inaccessible
      }
      type Employee @key(fields: "id") @key(fields: "badge") {
        id: ID!
        badge: String! @inaccessible
        name: String!
        salaryCents: Int! @inaccessible
      }
      type AuditLog @inaccessible { entries: [String!]! }
    `,
    resolvers: {
      Query: {
        employees: (_: unknown, { includeContractors }: { includeContractors: boolean }) => EMPLOYEES.filter((e) => includeContractors || !e.contractor),
        audit: () => ({ entries: ['secret'] }),
      },
      Employee: { __resolveReference: (ref: { id?: string; badge?: string }) => EMPLOYEES.find((e) => e.id === ref.id || e.badge === ref.badge) ?? null },
    },
  };
}

export function payrollSubgraph(): SubgraphOptions {
  return {
    name: 'payroll',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'inaccessible', 'external', 'requires')}
      type Query { payday: [Employee!]! }
      type Employee @key(fields: "badge") {
        badge: String! @inaccessible
        salaryCents: Int! @external
        bonusCents: Int! @requires(fields: "salaryCents")
      }
    `,
    resolvers: {
      Query: { payday: () => [{ badge: 'B-200' }] },
      Employee: {
        __resolveReference: (ref: { badge: string; salaryCents?: number }) => ref,
        bonusCents: (e: { salaryCents: number }) => Math.round(e.salaryCents * 0.1),
      },
    },
  };
}

export function staffGraph(): SubgraphOptions[] {
  return [directorySubgraph(), payrollSubgraph()];
}
