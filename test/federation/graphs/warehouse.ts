/**
 * A warehouse, a graph built around null propagation across fetches:
 * `inventory` lists bins and their items, `pricing` prices items and fails in
 * known ways — a non-null price it cannot give (x2), an item it does not know
 * (x3), a non-null field inside a nullable object (x1's discount).
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const BINS = [
  { id: 'b1', label: 'Aisle 1', items: ['x1', 'x2'], featured: 'x1' },
  { id: 'b2', label: 'Aisle 2', items: ['x3'], featured: 'x2' },
];
const NAMES = new Map([
  ['x1', 'Bolts'],
  ['x2', 'Nuts'],
  ['x3', 'Washers'],
]);

export function inventorySubgraph(): SubgraphOptions {
  const item = (sku: string) => ({ sku, name: NAMES.get(sku) });
  return {
    name: 'inventory',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { bins: [Bin!] bin(id: ID!): Bin warehouse: String }
      type Bin { id: ID! label: String! items: [Item] featured: Item! }
      type Item @key(fields: "sku") { sku: ID! name: String! }
    `,
    resolvers: {
      Query: {
        bins: () => BINS,
        bin: (_: unknown, { id }: { id: string }) => BINS.find((b) => b.id === id) ?? null,
        warehouse: () => 'North',
      },
      Bin: {
        items: (bin: { items: string[] }) => bin.items.map(item),
        featured: (bin: { featured: string }) => item(bin.featured),
      },
      Item: { __resolveReference: (ref: { sku: string }) => (NAMES.has(ref.sku) ? item(ref.sku) : null) },
    },
  };
}

export function pricingSubgraph(): SubgraphOptions {
  const prices = new Map<string, { priceCents: number | null; discount: { percent: number | null } | null }>([
    ['x1', { priceCents: 100, discount: { percent: null } }],
    ['x2', { priceCents: null, discount: null }],
  ]);
  return {
    name: 'pricing',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Item @key(fields: "sku") { sku: ID! priceCents: Int! discount: Discount }
      type Discount { percent: Int! }
    `,
    resolvers: {
      Item: {
        __resolveReference: (ref: { sku: string }) => {
          const price = prices.get(ref.sku);
          return price ? { sku: ref.sku, ...price } : null;
        },
      },
    },
  };
}

export function warehouseGraph(): SubgraphOptions[] {
  return [inventorySubgraph(), pricingSubgraph()];
}
