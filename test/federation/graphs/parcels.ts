/**
 * Parcel shipping, a graph built around `@requires`: `rates` prices a parcel
 * from its weight (an argument in the field set), size (nested selection) and
 * contents (fragments on an interface); `customs` requires the price (a chain
 * of requires); `parcels` requires the price back for insurance (a chain that
 * returns to the first subgraph).
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

interface Content {
  readonly __typename: 'Book' | 'Battery';
  readonly description: string;
  readonly pages?: number;
  readonly lithium?: boolean;
}

interface Parcel {
  readonly id: string;
  readonly grams: number;
  readonly size: { lengthCm: number; widthCm: number; heightCm: number };
  readonly contents: readonly Content[];
  readonly label: string;
}

const PARCELS: readonly Parcel[] = [
  { id: 'p1', grams: 2500, size: { lengthCm: 40, widthCm: 30, heightCm: 20 }, contents: [{ __typename: 'Book', description: 'Atlas', pages: 320 }], label: 'Atlas' },
  {
    id: 'p2',
    grams: 800,
    size: { lengthCm: 10, widthCm: 10, heightCm: 10 },
    contents: [
      { __typename: 'Battery', description: 'Drone battery', lithium: true },
      { __typename: 'Book', description: 'Manual', pages: 50 },
    ],
    label: 'Drone spares',
  },
  { id: 'p3', grams: 12000, size: { lengthCm: 100, widthCm: 50, heightCm: 50 }, contents: [], label: 'Bench' },
];

const MONEY = /* GraphQL */ `
  enum Currency { EUR USD }
  type Money @shareable { amount: Int! currency: Currency! }
`;

const CONTENTS = /* GraphQL */ `
  interface Content { description: String! }
  type Book implements Content @shareable { description: String! pages: Int! }
  type Battery implements Content @shareable { description: String! lithium: Boolean! }
  type Size @shareable { lengthCm: Int! widthCm: Int! heightCm: Int! }
  enum WeightUnit { GRAMS KILOGRAMS }
`;

type Representation = Record<string, unknown> & { id: string };

/** Owns parcels: weight, size, contents; insurance requires the price `rates` computes. */
export function parcelsSubgraph(): SubgraphOptions {
  return {
    name: 'parcels',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable', 'external', 'requires')}
      type Query { parcels: [Parcel!]! parcel(id: ID!): Parcel }
      type Parcel @key(fields: "id") {
        id: ID!
        label: String!
        weight(unit: WeightUnit! = GRAMS): Float!
        size: Size!
        contents: [Content!]!
        price(currency: Currency! = EUR): Money! @external
        insuranceCents: Int! @requires(fields: "price { amount }")
      }
      ${CONTENTS}
      ${MONEY}
    `,
    resolvers: {
      Query: {
        parcels: () => PARCELS,
        parcel: (_: unknown, { id }: { id: string }) => PARCELS.find((p) => p.id === id) ?? null,
      },
      Parcel: {
        __resolveReference: (ref: Representation) => {
          const parcel = PARCELS.find((p) => p.id === ref.id);
          return parcel ? { ...parcel, ...ref } : null;
        },
        weight: (parcel: Parcel, { unit }: { unit: string }) => (unit === 'KILOGRAMS' ? parcel.grams / 1000 : parcel.grams),
        insuranceCents: (parcel: { price: { amount: number } }) => Math.round(parcel.price.amount * 0.02),
      },
      Content: { __resolveType: (content: Content) => content.__typename },
    },
  };
}

/** Prices parcels from what it requires of `parcels`. */
export function ratesSubgraph(): SubgraphOptions {
  return {
    name: 'rates',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable', 'external', 'requires')}
      type Query { cheapestParcel: Parcel }
      type Parcel @key(fields: "id") {
        id: ID!
        weight(unit: WeightUnit! = GRAMS): Float! @external
        size: Size! @external
        contents: [Content!]! @external
        price(currency: Currency! = EUR): Money! @requires(fields: "weight(unit: KILOGRAMS) size { lengthCm widthCm heightCm }")
        hazardSurcharge: Int! @requires(fields: "contents { ... on Battery { lithium } ... on Book { pages } }")
      }
      ${CONTENTS}
      ${MONEY}
    `,
    resolvers: {
      Query: { cheapestParcel: () => ({ id: 'p2' }) },
      Parcel: {
        __resolveReference: (ref: Representation) => ref,
        price: (parcel: { weight: number; size: Parcel['size'] }, { currency }: { currency: string }) => {
          const liters = (parcel.size.lengthCm * parcel.size.widthCm * parcel.size.heightCm) / 1000;
          const euros = parcel.weight * 300 + liters * 10;
          return { amount: Math.round(currency === 'USD' ? euros * 1.1 : euros), currency };
        },
        hazardSurcharge: (parcel: { contents: Array<{ lithium?: boolean; pages?: number }> }) =>
          parcel.contents.reduce((sum, c) => sum + (c.lithium ? 1500 : 0) + ((c.pages ?? 0) > 300 ? 100 : 0), 0),
      },
    },
  };
}

/** Customs duty, which requires the price in dollars: a requires on a field that itself requires. */
export function customsSubgraph(): SubgraphOptions {
  return {
    name: 'customs',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable', 'external', 'requires')}
      type Parcel @key(fields: "id") {
        id: ID!
        price(currency: Currency! = EUR): Money! @external
        duty: Int! @requires(fields: "price(currency: USD) { amount }")
      }
      ${MONEY}
    `,
    resolvers: {
      Parcel: {
        __resolveReference: (ref: Representation) => ref,
        duty: (parcel: { price: { amount: number } }) => (parcel.price.amount > 1000 ? Math.round(parcel.price.amount * 0.2) : 0),
      },
    },
  };
}

export function parcelGraph(): SubgraphOptions[] {
  return [parcelsSubgraph(), ratesSubgraph(), customsSubgraph()];
}
