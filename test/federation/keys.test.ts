import { describe, expect, it } from 'vitest';
import { vehicleGraph } from './graphs/vehicles.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(vehicleGraph);

describe('multiple keys and key hops', () => {
  it('hops through a subgraph that knows both keys to reach one keyed by the other', async () => {
    expect(await graph().query('{ vehicles { model tollsCents } }')).toEqual({
      data: {
        vehicles: [
          { model: 'Roadster', tollsCents: [350, 120] },
          { model: 'Van', tollsCents: [] },
        ],
      },
    });
    expect(graph().representations('plates')).toEqual([
      [
        { __typename: 'Vehicle', vin: 'V1' },
        { __typename: 'Vehicle', vin: 'V2' },
      ],
    ]);
    expect(graph().representations('tolls')).toEqual([
      [
        { __typename: 'Vehicle', plate: 'AB-123' },
        { __typename: 'Vehicle', plate: 'XY-987' },
      ],
    ]);
  });

  it('uses whichever key each target accepts from an entity found by another key', async () => {
    expect(await graph().query('{ byPlate(plate: "XY-987") { vin model tollsCents } }')).toEqual({
      data: { byPlate: { vin: 'V2', model: 'Van', tollsCents: [] } },
    });
    expect(graph().representations('registry')).toEqual([[{ __typename: 'Vehicle', vin: 'V2' }]]);
    expect(graph().representations('tolls')).toEqual([[{ __typename: 'Vehicle', plate: 'XY-987' }]]);
    expect(graph().calls('plates')).toHaveLength(1);
  });
});

describe('composite keys', () => {
  it('sends every field of a composite key', async () => {
    expect(await graph().query('{ vehicles { permit { zone number validUntil } } }')).toEqual({
      data: {
        vehicles: [{ permit: { zone: 'north', number: 7, validUntil: '2027-01-31' } }, { permit: { zone: 'south', number: 2, validUntil: '2026-12-31' } }],
      },
    });
    expect(graph().representations('parking')).toEqual([
      [
        { __typename: 'Permit', zone: 'north', number: 7 },
        { __typename: 'Permit', zone: 'south', number: 2 },
      ],
    ]);
  });

  it('sends a nested composite key with its sub-selection', async () => {
    expect(await graph().query('{ openClaims { id policy { number insurer { name } premiumCents } } }')).toEqual({
      data: { openClaims: [{ id: 'cl1', policy: { number: 42, insurer: { name: 'Acme' }, premiumCents: 4200 } }] },
    });
    expect(graph().representations('insurance')).toEqual([[{ __typename: 'Policy', insurer: { name: 'Acme' }, number: 42 }]]);
  });
});

describe('non-resolvable keys (resolvable: false)', () => {
  it('reads key fields from the referencing subgraph and the rest from the owner', async () => {
    expect(await graph().query('{ vehicles { registeredIn { code name } } }')).toEqual({
      data: { vehicles: [{ registeredIn: { code: 'NL', name: 'Netherlands' } }, { registeredIn: { code: 'BE', name: 'Belgium' } }] },
    });
    expect(graph().representations('insurance')).toEqual([
      [
        { __typename: 'Country', code: 'NL' },
        { __typename: 'Country', code: 'BE' },
      ],
    ]);
  });

  it('never sends an entity fetch to a subgraph whose key is not resolvable', async () => {
    expect(await graph().query('{ permits { zone number validUntil } }')).toEqual({
      data: { permits: [{ zone: 'south', number: 2, validUntil: '2026-12-31' }] },
    });
    expect(await graph().query('{ openClaims { policy { premiumCents } } }')).toEqual({ data: { openClaims: [{ policy: { premiumCents: 4200 } }] } });
    expect(graph().calls('registry')).toEqual([]);
    expect(graph().representations('claims')).toEqual([]);
  });
});
