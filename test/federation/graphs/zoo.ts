/**
 * A zoo, a graph built around abstract types whose members differ per
 * subgraph: `shelter` knows `Pet = Cat | Dog` and `Animal` implemented by Cat
 * and Dog, `aviary` knows `Pet = Dog | Parrot` and `Animal` implemented by Dog
 * and Parrot; `vet` adds a field to all three (abstract types across
 * subgraphs).
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const CATS = [{ __typename: 'Cat', id: 'c1', name: 'Miso', lives: 9 }];
const DOGS = [{ __typename: 'Dog', id: 'd1', name: 'Rex', goodBoy: true }];
const PARROTS = [{ __typename: 'Parrot', id: 'pa1', name: 'Kiwi', words: ['hello', 'cracker'] }];

const resolveType = { __resolveType: (animal: { __typename: string }) => animal.__typename };

export function shelterSubgraph(): SubgraphOptions {
  return {
    name: 'shelter',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { pets: [Pet!]! animals: [Animal!]! }
      union Pet = Cat | Dog
      interface Animal { id: ID! name: String! }
      type Cat implements Animal @key(fields: "id") { id: ID! name: String! lives: Int! }
      type Dog implements Animal @key(fields: "id") { id: ID! name: String! @shareable goodBoy: Boolean! }
    `,
    resolvers: {
      Query: { pets: () => [...CATS, ...DOGS], animals: () => [...DOGS, ...CATS] },
      Pet: resolveType,
      Animal: resolveType,
      Cat: { __resolveReference: (ref: { id: string }) => CATS.find((c) => c.id === ref.id) ?? null },
      Dog: { __resolveReference: (ref: { id: string }) => DOGS.find((d) => d.id === ref.id) ?? null },
    },
  };
}

export function aviarySubgraph(): SubgraphOptions {
  return {
    name: 'aviary',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { visitors: [Pet!]! flyers: [Animal!]! }
      union Pet = Dog | Parrot
      interface Animal { id: ID! name: String! }
      type Dog implements Animal @key(fields: "id") { id: ID! name: String! @shareable }
      type Parrot implements Animal @key(fields: "id") { id: ID! name: String! words: [String!]! }
    `,
    resolvers: {
      Query: { visitors: () => [...PARROTS, ...DOGS], flyers: () => PARROTS },
      Pet: resolveType,
      Animal: resolveType,
      Dog: { __resolveReference: (ref: { id: string }) => DOGS.find((d) => d.id === ref.id) ?? null },
      Parrot: { __resolveReference: (ref: { id: string }) => PARROTS.find((p) => p.id === ref.id) ?? null },
    },
  };
}

export function vetSubgraph(): SubgraphOptions {
  const vaccinated = new Set(['c1', 'pa1']);
  const checked = { __resolveReference: (ref: { id: string }) => ({ ...ref, vaccinated: vaccinated.has(ref.id) }) };
  return {
    name: 'vet',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Cat @key(fields: "id") { id: ID! vaccinated: Boolean! }
      type Dog @key(fields: "id") { id: ID! vaccinated: Boolean! }
      type Parrot @key(fields: "id") { id: ID! vaccinated: Boolean! }
    `,
    resolvers: { Cat: checked, Dog: checked, Parrot: checked },
  };
}

export function zooGraph(): SubgraphOptions[] {
  return [shelterSubgraph(), aviarySubgraph(), vetSubgraph()];
}
