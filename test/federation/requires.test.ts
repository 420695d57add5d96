import { describe, expect, it } from 'vitest';
import { parcelGraph } from './graphs/parcels.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(parcelGraph);

describe('@requires', () => {
  it('sends a required field fetched with an argument, and a nested selection, in the representation', async () => {
    expect(await graph().query('{ parcels { label price(currency: USD) { amount currency } } }')).toEqual({
      data: {
        parcels: [
          { label: 'Atlas', price: { amount: 1089, currency: 'USD' } },
          { label: 'Drone spares', price: { amount: 275, currency: 'USD' } },
          { label: 'Bench', price: { amount: 6710, currency: 'USD' } },
        ],
      },
    });
    expect(graph().representations('rates')).toEqual([
      [
        { __typename: 'Parcel', id: 'p1', weight: 2.5, size: { lengthCm: 40, widthCm: 30, heightCm: 20 } },
        { __typename: 'Parcel', id: 'p2', weight: 0.8, size: { lengthCm: 10, widthCm: 10, heightCm: 10 } },
        { __typename: 'Parcel', id: 'p3', weight: 12, size: { lengthCm: 100, widthCm: 50, heightCm: 50 } },
      ],
    ]);
    expect(graph().calls('customs')).toEqual([]);
  });

  it('keeps the client’s own argument when it selects the required field with another one', async () => {
    expect(await graph().query('{ parcel(id: "p1") { weight grams: weight(unit: GRAMS) price { amount } } }')).toEqual({
      data: { parcel: { weight: 2500, grams: 2500, price: { amount: 990 } } },
    });
    expect(graph().representations('rates')).toEqual([[{ __typename: 'Parcel', id: 'p1', weight: 2.5, size: { lengthCm: 40, widthCm: 30, heightCm: 20 } }]]);
  });

  it('requires fields selected through fragments on an interface, sending each object’s concrete type', async () => {
    expect(await graph().query('{ parcels { id hazardSurcharge } }')).toEqual({
      data: {
        parcels: [
          { id: 'p1', hazardSurcharge: 100 },
          { id: 'p2', hazardSurcharge: 1500 },
          { id: 'p3', hazardSurcharge: 0 },
        ],
      },
    });
    expect(graph().representations('rates')).toEqual([
      [
        { __typename: 'Parcel', id: 'p1', contents: [{ __typename: 'Book', pages: 320 }] },
        {
          __typename: 'Parcel',
          id: 'p2',
          contents: [
            { __typename: 'Battery', lithium: true },
            { __typename: 'Book', pages: 50 },
          ],
        },
        { __typename: 'Parcel', id: 'p3', contents: [] },
      ],
    ]);
  });

  it('resolves a chain of requires: customs needs the price, which needs the weight and size', async () => {
    expect(await graph().query('{ parcels { label duty } }')).toEqual({
      data: {
        parcels: [
          { label: 'Atlas', duty: 218 },
          { label: 'Drone spares', duty: 0 },
          { label: 'Bench', duty: 1342 },
        ],
      },
    });
    expect(graph().calls('rates')).toHaveLength(1);
    expect(graph().representations('customs')).toEqual([
      [
        { __typename: 'Parcel', id: 'p1', price: { amount: 1089 } },
        { __typename: 'Parcel', id: 'p2', price: { amount: 275 } },
        { __typename: 'Parcel', id: 'p3', price: { amount: 6710 } },
      ],
    ]);
  });

  it('comes back to the first subgraph for a field that requires what another subgraph derived from it', async () => {
    expect(await graph().query('{ parcel(id: "p3") { label insuranceCents } }')).toEqual({
      data: { parcel: { label: 'Bench', insuranceCents: 122 } },
    });
    expect(graph().calls('parcels')).toHaveLength(2);
    expect(graph().representations('parcels')).toEqual([[{ __typename: 'Parcel', id: 'p3', price: { amount: 6100 } }]]);
  });

  it('fetches required fields from another subgraph before a requiring field of the subgraph the query started in', async () => {
    expect(await graph().query('{ cheapestParcel { label price(currency: USD) { amount } } }')).toEqual({
      data: { cheapestParcel: { label: 'Drone spares', price: { amount: 275 } } },
    });
    expect(graph().calls('rates')).toHaveLength(2);
    expect(graph().representations('rates')).toEqual([[{ __typename: 'Parcel', id: 'p2', weight: 0.8, size: { lengthCm: 10, widthCm: 10, heightCm: 10 } }]]);
  });

  it('answers every requiring field of one entity together with one call per subgraph', async () => {
    expect(await graph().query('{ parcels { id hazardSurcharge duty insuranceCents price { amount } } }')).toEqual({
      data: {
        parcels: [
          { id: 'p1', hazardSurcharge: 100, duty: 218, insuranceCents: 20, price: { amount: 990 } },
          { id: 'p2', hazardSurcharge: 1500, duty: 0, insuranceCents: 5, price: { amount: 250 } },
          { id: 'p3', hazardSurcharge: 0, duty: 1342, insuranceCents: 122, price: { amount: 6100 } },
        ],
      },
    });
    expect(graph().calls('rates')).toHaveLength(1);
    expect(graph().calls('customs')).toHaveLength(1);
  });
});
