import { describe, expect, it } from 'vitest';
import { warehouseGraph } from './graphs/warehouse.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(warehouseGraph);

describe('null propagation across fetches', () => {
  it('nulls the nearest nullable parent of a non-null field an entity fetch could not give, with the error at the client path', async () => {
    expect(await graph().query('{ bin(id: "b1") { items { sku priceCents } } }')).toEqual({
      data: { bin: { items: [{ sku: 'x1', priceCents: 100 }, null] } },
      errors: [{ message: 'Cannot return null for non-nullable field Item.priceCents.', path: ['bin', 'items', 1, 'priceCents'] }],
    });
  });

  it('propagates through non-null parents up to a nullable list, leaving sibling root fields alone', async () => {
    expect(await graph().query('{ warehouse bins { label featured { name priceCents } } }')).toEqual({
      data: { warehouse: 'North', bins: null },
      errors: [{ message: 'Cannot return null for non-nullable field Item.priceCents.', path: ['bins', 1, 'featured', 'priceCents'] }],
    });
  });

  it('reports an entity the other subgraph does not know as a missing non-null field', async () => {
    expect(await graph().query('{ bin(id: "b2") { label items { sku name priceCents } } }')).toEqual({
      data: { bin: { label: 'Aisle 2', items: [null] } },
      errors: [{ message: 'Cannot return null for non-nullable field Item.priceCents.', path: ['bin', 'items', 0, 'priceCents'] }],
    });
  });

  it('stops at a nullable object inside the entity fetch', async () => {
    expect(await graph().query('{ bin(id: "b1") { items { sku discount { percent } } } }')).toEqual({
      data: {
        bin: {
          items: [
            { sku: 'x1', discount: null },
            { sku: 'x2', discount: null },
          ],
        },
      },
      errors: [{ message: 'Cannot return null for non-nullable field Discount.percent.', path: ['bin', 'items', 0, 'discount', 'percent'] }],
    });
  });

  it('nulls a nullable root field whose non-null child failed in a later fetch', async () => {
    expect(await graph().query('{ bin(id: "b2") { label featured { sku priceCents } } warehouse }')).toEqual({
      data: { bin: null, warehouse: 'North' },
      errors: [{ message: 'Cannot return null for non-nullable field Item.priceCents.', path: ['bin', 'featured', 'priceCents'] }],
    });
  });

  it('returns the rest of the data when the failing field is not asked for', async () => {
    expect(await graph().query('{ bins { label featured { sku name } items { name } } }')).toEqual({
      data: {
        bins: [
          { label: 'Aisle 1', featured: { sku: 'x1', name: 'Bolts' }, items: [{ name: 'Bolts' }, { name: 'Nuts' }] },
          { label: 'Aisle 2', featured: { sku: 'x2', name: 'Nuts' }, items: [{ name: 'Washers' }] },
        ],
      },
    });
    expect(graph().calls('pricing')).toEqual([]);
  });
});
