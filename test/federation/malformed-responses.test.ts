import { beforeEach, describe, expect, it } from 'vitest';
import type { SubgraphOptions } from '../../src/testing/index.js';
import { inventorySubgraph, pricingSubgraph } from './graphs/warehouse.js';
import { aviarySubgraph, shelterSubgraph, vetSubgraph } from './graphs/zoo.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

/** Raw bodies the subgraphs send instead of their real answer, by subgraph name (none: answer normally). */
const bodies = new Map<string, string>();
beforeEach(() => bodies.clear());

function broken(options: SubgraphOptions): SubgraphOptions {
  return {
    ...options,
    reply: () => {
      const body = bodies.get(options.name);
      return body === undefined ? undefined : { body };
    },
  };
}

const warehouse = useFederatedGraph(() => [broken(inventorySubgraph()), broken(pricingSubgraph())]);
const zoo = useFederatedGraph(() => [broken(shelterSubgraph()), aviarySubgraph(), vetSubgraph()]);

const priced = '{ bin(id: "b1") { items { sku priceCents } } }';
const invalid = (message: string, path: Array<string | number>) => ({
  message: `Subgraph "pricing" sent an invalid response: ${message}`,
  path,
  extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'pricing' },
});
const missingPrice = (index: number) => ({ message: 'Cannot return null for non-nullable field Item.priceCents.', path: ['bin', 'items', index, 'priceCents'] });

describe('malformed entity responses', () => {
  it('merges nothing from an _entities answer that is not a list, and says so at each position', async () => {
    bodies.set('pricing', JSON.stringify({ data: { _entities: { priceCents: 1 } } }));
    expect(await warehouse().query(priced)).toEqual({
      data: { bin: { items: [null, null] } },
      errors: [invalid('"_entities" is not a list.', ['bin', 'items', 0]), invalid('"_entities" is not a list.', ['bin', 'items', 1])],
    });
  });

  it('merges nothing from an _entities list shorter than the representations, and says so at each position', async () => {
    bodies.set('pricing', JSON.stringify({ data: { _entities: [{ priceCents: 1 }] } }));
    expect(await warehouse().query(priced)).toEqual({
      data: { bin: { items: [null, null] } },
      errors: [invalid('it returned 1 entities for 2 representations.', ['bin', 'items', 0]), invalid('it returned 1 entities for 2 representations.', ['bin', 'items', 1])],
    });
  });

  it('treats entities that are not objects as missing', async () => {
    bodies.set('pricing', JSON.stringify({ data: { _entities: ['x1', 5] } }));
    expect(await warehouse().query(priced)).toEqual({ data: { bin: { items: [null, null] } }, errors: [missingPrice(0), missingPrice(1)] });
  });

  it('treats an answer without _entities as missing entities', async () => {
    bodies.set('pricing', JSON.stringify({ data: {} }));
    expect(await warehouse().query(priced)).toEqual({ data: { bin: { items: [null, null] } }, errors: [missingPrice(0), missingPrice(1)] });
  });

  it('rejects a value of the wrong type at its path and keeps the key fields the router already has', async () => {
    bodies.set('pricing', JSON.stringify({ data: { _entities: [{ priceCents: 'cheap' }, { priceCents: 2, sku: 'HACKED' }] } }));
    expect(await warehouse().query(priced)).toEqual({
      data: { bin: { items: [null, { sku: 'x2', priceCents: 2 }] } },
      errors: [{ message: 'Int cannot represent non-integer value: "cheap"', path: ['bin', 'items', 0, 'priceCents'] }],
    });
  });

  it('moves an entity error to the client path of its representation', async () => {
    bodies.set('pricing', JSON.stringify({ data: { _entities: [null, { priceCents: 2 }] }, errors: [{ message: 'x1 is gone', path: ['_entities', 0] }] }));
    expect(await warehouse().query(priced)).toEqual({
      data: { bin: { items: [null, { sku: 'x2', priceCents: 2 }] } },
      errors: [{ message: 'x1 is gone', path: ['bin', 'items', 0] }],
    });
  });

  it('passes on errors whose path points nowhere, and malformed errors, without their paths', async () => {
    bodies.set(
      'pricing',
      JSON.stringify({
        data: { _entities: [{ priceCents: 1 }, { priceCents: 2 }] },
        errors: [{ message: 'stray', path: ['_entities', 9, 'priceCents'] }, { message: 5 }],
      }),
    );
    expect(await warehouse().query(priced)).toEqual({
      data: {
        bin: {
          items: [
            { sku: 'x1', priceCents: 1 },
            { sku: 'x2', priceCents: 2 },
          ],
        },
      },
      errors: [{ message: 'stray' }, { message: 'Subgraph sent a malformed error.' }],
    });
  });
});

describe('malformed root responses', () => {
  const query = '{ warehouse bin(id: "b1") { label } }';

  /** Each of `answers`, as inventory's answer, nulls both root fields with an error at each. */
  async function expectRootsNulled(answers: readonly string[], message: string): Promise<void> {
    const error = { message, extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'inventory' } };
    for (const body of answers) {
      bodies.set('inventory', body);
      expect(await warehouse().query(query)).toEqual({
        data: { warehouse: null, bin: null },
        errors: [
          { ...error, path: ['warehouse'] },
          { ...error, path: ['bin'] },
        ],
      });
    }
  }

  it('nulls the fields of a root fetch whose answer is not JSON, or JSON of the wrong shape, with an error at each', async () => {
    await expectRootsNulled(
      ['<html>busy</html>', JSON.stringify({ data: 'oops' }), JSON.stringify({ errors: 'boom' }), '[1,2]'],
      'Subgraph "inventory" sent a response that is not GraphQL JSON.',
    );
  });

  it('reports a root answer with neither data nor errors at each root field', async () => {
    await expectRootsNulled([JSON.stringify({}), JSON.stringify({ data: null })], 'Subgraph "inventory" sent an invalid response: it sent no data and no errors.');
  });

  it('reports a scalar or a list where the schema has an object, at its path', async () => {
    bodies.set('inventory', JSON.stringify({ data: { warehouse: 'North', bin: 'oops' } }));
    expect(await warehouse().query(query)).toEqual({
      data: { warehouse: 'North', bin: null },
      errors: [{ message: 'Expected an object for field "Query.bin".', path: ['bin'] }],
    });
    bodies.set('inventory', JSON.stringify({ data: { warehouse: 'North', bin: [{ label: 'Aisle 1' }] } }));
    expect(await warehouse().query(query)).toEqual({
      data: { warehouse: 'North', bin: null },
      errors: [{ message: 'Expected an object for field "Query.bin".', path: ['bin'] }],
    });
  });

  it('reports an object or a list where the schema has a scalar, at its path', async () => {
    bodies.set('inventory', JSON.stringify({ data: { warehouse: ['North'], bin: { label: { text: 'Aisle 1' } } } }));
    expect(await warehouse().query(query)).toEqual({
      data: { warehouse: null, bin: null },
      errors: [
        { message: 'String cannot represent value: ["North"]', path: ['warehouse'] },
        { message: 'String cannot represent value: { text: "Aisle 1" }', path: ['bin', 'label'] },
      ],
    });
  });
});

describe('wrong __typename from a subgraph', () => {
  it('nulls an object whose __typename is a type the supergraph does not have, naming it', async () => {
    bodies.set('shelter', JSON.stringify({ data: { pets: [{ __typename: 'Hamster', name: 'Hammy' }] } }));
    expect(await zoo().query('{ pets { __typename ... on Cat { name } } }')).toEqual({
      data: null,
      errors: [{ message: 'Abstract type "Pet" was resolved to a type "Hamster" that does not exist inside the schema.', path: ['pets', 0] }],
    });
  });

  it('nulls an object whose __typename is a type outside the interface, and fetches nothing for it', async () => {
    bodies.set('shelter', JSON.stringify({ data: { animals: [{ __typename: 'Query', id: 'q', name: 'q' }] } }));
    expect(await zoo().query('{ animals { name ... on Cat { vaccinated } } }')).toEqual({
      data: null,
      errors: [{ message: 'Abstract type "Animal" was resolved to a type "Query" that does not exist inside the schema.', path: ['animals', 0] }],
    });
    expect(zoo().calls('vet')).toEqual([]);
  });

  it('nulls an object without __typename in an abstract position', async () => {
    bodies.set('shelter', JSON.stringify({ data: { pets: [{ name: 'Miso' }] } }));
    expect(await zoo().query('{ pets { ... on Cat { name } } }')).toEqual({
      data: null,
      errors: [{ message: 'Abstract type "Pet" was resolved to a type "" that does not exist inside the schema.', path: ['pets', 0] }],
    });
  });

  it('follows the __typename the subgraph reported when choosing entity fetches', async () => {
    bodies.set(
      'shelter',
      JSON.stringify({
        data: {
          pets: [
            { __typename: 'Dog', id: 'c1' },
            { __typename: 'Cat', id: 'c1' },
          ],
        },
      }),
    );
    expect(await zoo().query('{ pets { __typename ... on Cat { vaccinated } } }')).toEqual({
      data: { pets: [{ __typename: 'Dog' }, { __typename: 'Cat', vaccinated: true }] },
    });
    expect(zoo().representations('vet')).toEqual([[{ __typename: 'Cat', id: 'c1' }]]);
  });
});
