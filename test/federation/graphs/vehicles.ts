/**
 * Vehicles, a graph built around keys: `registry` knows vehicles by VIN,
 * `plates` by VIN and by plate (two keys), `tolls` by plate only (reaching it
 * from `registry` hops through `plates`), `parking` owns permits keyed by a
 * composite key that `registry` references without resolving it
 * (`resolvable: false`), and `insurance` keys policies by a nested composite
 * key.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const VEHICLES = [
  { vin: 'V1', model: 'Roadster', plate: 'AB-123', permit: { zone: 'north', number: 7 }, country: 'NL' },
  { vin: 'V2', model: 'Van', plate: 'XY-987', permit: { zone: 'south', number: 2 }, country: 'BE' },
];
const byVin = (vin: string) => VEHICLES.find((v) => v.vin === vin) ?? null;

export function registrySubgraph(): SubgraphOptions {
  return {
    name: 'registry',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { vehicles: [Vehicle!]! }
      type Vehicle @key(fields: "vin") { vin: ID! model: String! permit: Permit registeredIn: Country! }
      type Permit @key(fields: "zone number", resolvable: false) { zone: String! number: Int! }
      type Country @key(fields: "code", resolvable: false) { code: String! }
    `,
    resolvers: {
      Query: { vehicles: () => VEHICLES },
      Vehicle: {
        __resolveReference: (ref: { vin: string }) => byVin(ref.vin),
        registeredIn: (v: { country: string }) => ({ code: v.country }),
      },
    },
  };
}

export function platesSubgraph(): SubgraphOptions {
  return {
    name: 'plates',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { byPlate(plate: String!): Vehicle }
      type Vehicle @key(fields: "vin") @key(fields: "plate") { vin: ID! plate: String! }
    `,
    resolvers: {
      Query: { byPlate: (_: unknown, { plate }: { plate: string }) => VEHICLES.find((v) => v.plate === plate) ?? null },
      Vehicle: { __resolveReference: (ref: { vin?: string; plate?: string }) => VEHICLES.find((v) => v.vin === ref.vin || v.plate === ref.plate) ?? null },
    },
  };
}

export function tollsSubgraph(): SubgraphOptions {
  const tolls = new Map([
    ['AB-123', [350, 120]],
    ['XY-987', []],
  ]);
  return {
    name: 'tolls',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Vehicle @key(fields: "plate") { plate: String! tollsCents: [Int!]! }
    `,
    resolvers: {
      Vehicle: { __resolveReference: (ref: { plate: string }) => ({ plate: ref.plate, tollsCents: tolls.get(ref.plate) ?? [] }) },
    },
  };
}

export function parkingSubgraph(): SubgraphOptions {
  const validUntil = new Map([
    ['north/7', '2027-01-31'],
    ['south/2', '2026-12-31'],
  ]);
  return {
    name: 'parking',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { permits: [Permit!]! }
      type Permit @key(fields: "zone number") { zone: String! number: Int! validUntil: String! }
    `,
    resolvers: {
      Query: { permits: () => [{ zone: 'south', number: 2, validUntil: '2026-12-31' }] },
      Permit: {
        __resolveReference: (ref: { zone: string; number: number }) => {
          const until = validUntil.get(`${ref.zone}/${ref.number}`);
          return until ? { ...ref, validUntil: until } : null;
        },
      },
    },
  };
}

export function insuranceSubgraph(): SubgraphOptions {
  return {
    name: 'insurance',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Country @key(fields: "code") { code: String! name: String! }
      type Vehicle @key(fields: "vin") { vin: ID! policy: Policy }
      type Policy @key(fields: "insurer { name } number") { insurer: Insurer! number: Int! premiumCents: Int! }
      type Insurer { name: String! }
      type Query { policy(insurer: String!, number: Int!): Policy }
    `,
    resolvers: {
      Query: { policy: (_: unknown, { insurer, number }: { insurer: string; number: number }) => ({ insurer: { name: insurer }, number, premiumCents: number * 100 }) },
      Country: { __resolveReference: (ref: { code: string }) => ({ code: ref.code, name: ref.code === 'NL' ? 'Netherlands' : 'Belgium' }) },
      Vehicle: {
        __resolveReference: (ref: { vin: string }) => ref,
        policy: (v: { vin: string }) => (v.vin === 'V1' ? { insurer: { name: 'Acme' }, number: 42, premiumCents: 9900 } : null),
      },
      Policy: { __resolveReference: (ref: { insurer: { name: string }; number: number }) => ({ ...ref, premiumCents: ref.number * 100 }) },
    },
  };
}

/** Claims: refers to policies by their nested composite key only. */
export function claimsSubgraph(): SubgraphOptions {
  return {
    name: 'claims',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { openClaims: [Claim!]! }
      type Claim { id: ID! policy: Policy! }
      type Policy @key(fields: "insurer { name } number", resolvable: false) { insurer: Insurer! number: Int! }
      type Insurer { name: String! }
    `,
    resolvers: {
      Query: { openClaims: () => [{ id: 'cl1', policy: { insurer: { name: 'Acme' }, number: 42 } }] },
    },
  };
}

export function vehicleGraph(): SubgraphOptions[] {
  return [registrySubgraph(), platesSubgraph(), tollsSubgraph(), parkingSubgraph(), insuranceSubgraph(), claimsSubgraph()];
}
