import { describe, expect, it } from 'vitest';
import { shopGraph } from './graphs/shop.js';
import { zooGraph } from './graphs/zoo.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(zooGraph);
const shop = useFederatedGraph(shopGraph);

describe('union intersections (members differ per subgraph)', () => {
  it('drops a fragment on a member the queried subgraph does not know, and answers the others', async () => {
    expect(await graph().query('{ pets { __typename ... on Cat { name lives } ... on Parrot { name words } } }')).toEqual({
      data: { pets: [{ __typename: 'Cat', name: 'Miso', lives: 9 }, { __typename: 'Dog' }] },
    });
    expect(graph().calls('shelter')).toHaveLength(1);
    expect(graph().calls('shelter')[0]!.query).not.toContain('Parrot');
  });

  it('answers the other subgraph’s view of the same union', async () => {
    expect(await graph().query('{ visitors { __typename ... on Cat { lives } ... on Dog { name } ... on Parrot { words } } }')).toEqual({
      data: {
        visitors: [
          { __typename: 'Parrot', words: ['hello', 'cracker'] },
          { __typename: 'Dog', name: 'Rex' },
        ],
      },
    });
    expect(graph().calls('aviary')[0]!.query).not.toContain('Cat');
  });

  it('answers a fragment on an interface inside a union', async () => {
    expect(await graph().query('{ visitors { ... on Animal { id name } } pets { ... on Animal { name } } }')).toEqual({
      data: {
        visitors: [
          { id: 'pa1', name: 'Kiwi' },
          { id: 'd1', name: 'Rex' },
        ],
        pets: [{ name: 'Miso' }, { name: 'Rex' }],
      },
    });
  });

  it('jumps for a member field the union’s subgraph does not have', async () => {
    expect(await graph().query('{ visitors { ... on Dog { goodBoy } } }')).toEqual({ data: { visitors: [{}, { goodBoy: true }] } });
    expect(graph().representations('shelter')).toEqual([[{ __typename: 'Dog', id: 'd1' }]]);
  });
});

describe('interface intersections (implementations differ per subgraph)', () => {
  it('answers interface fields and fragments on implementations, skipping those the subgraph lacks', async () => {
    expect(await graph().query('{ animals { __typename name ... on Parrot { words } ... on Dog { goodBoy } } }')).toEqual({
      data: {
        animals: [
          { __typename: 'Dog', name: 'Rex', goodBoy: true },
          { __typename: 'Cat', name: 'Miso' },
        ],
      },
    });
    expect(graph().calls('shelter')[0]!.query).not.toContain('Parrot');
  });

  it('jumps for a fragment on an implementation whose field lives in the other subgraph', async () => {
    expect(await graph().query('{ flyers { ... on Dog { goodBoy } ... on Parrot { name } } }')).toEqual({ data: { flyers: [{ name: 'Kiwi' }] } });
    expect(graph().calls('shelter')).toEqual([]);
  });
});

describe('abstract types across subgraphs', () => {
  it('fetches a field of each member from a third subgraph by the member’s key', async () => {
    expect(await graph().query('{ pets { ... on Cat { vaccinated } ... on Dog { vaccinated } } flyers { name ... on Parrot { vaccinated } } }')).toEqual({
      data: { pets: [{ vaccinated: true }, { vaccinated: false }], flyers: [{ name: 'Kiwi', vaccinated: true }] },
    });
    expect(graph().representations('vet').flat()).toEqual(
      expect.arrayContaining([
        { __typename: 'Cat', id: 'c1' },
        { __typename: 'Dog', id: 'd1' },
        { __typename: 'Parrot', id: 'pa1' },
      ]),
    );
    expect(graph().representations('vet').flat()).toHaveLength(3);
  });

  it('fetches nothing for a fragment no returned object matches', async () => {
    expect(await graph().query('{ flyers { id ... on Cat { vaccinated } } }')).toEqual({ data: { flyers: [{ id: 'pa1' }] } });
    expect(graph().calls('vet')).toEqual([]);
  });
});

describe('__typename', () => {
  it('reports the concrete type of union members and interface implementations, and the root type', async () => {
    expect(await graph().query('{ __typename visitors { __typename } flyers { __typename } animals { kind: __typename } }')).toEqual({
      data: {
        __typename: 'Query',
        visitors: [{ __typename: 'Parrot' }, { __typename: 'Dog' }],
        flyers: [{ __typename: 'Parrot' }],
        animals: [{ kind: 'Dog' }, { kind: 'Cat' }],
      },
    });
  });

  it('answers a lone root __typename without calling any subgraph', async () => {
    expect(await graph().query('{ __typename }')).toEqual({ data: { __typename: 'Query' } });
    for (const name of ['shelter', 'aviary', 'vet']) expect(graph().calls(name)).toEqual([]);
  });

  it('reports __typename inside fragments on interfaces and on members alike', async () => {
    expect(await graph().query('{ pets { ... on Animal { t1: __typename } ... on Cat { t2: __typename } } }')).toEqual({
      data: { pets: [{ t1: 'Cat', t2: 'Cat' }, { t1: 'Dog' }] },
    });
  });
});

describe('child type mismatches', () => {
  it('answers sibling fragments selecting a field non-null on one type and nullable on the other in the subgraph', async () => {
    expect(await shop().query('{ products { ... on Book { code } ... on Game { code } } }')).toEqual({
      data: { products: [{ code: 'ISBN-1' }, { code: null }] },
    });
    expect(shop().calls('store')).toHaveLength(1);
  });

  it('keeps the field apart from its sibling while also jumping for another field', async () => {
    expect(await shop().query('{ products { __typename ... on Book { code title shelf { row label } } ... on Game { code players } } }')).toEqual({
      data: {
        products: [
          { __typename: 'Book', code: 'ISBN-1', title: 'Dune', shelf: { row: 3, label: 'Sci-fi' } },
          { __typename: 'Game', code: null, players: 2 },
        ],
      },
    });
    expect(shop().representations('labels')).toEqual([[{ __typename: 'Book', id: 'bk1' }]]);
  });

  it('reads the nullable variant from the subgraph that has it nullable', async () => {
    expect(await shop().query('{ bestseller { code title shelf { row } } }')).toEqual({
      data: { bestseller: { code: 'ISBN-1', title: 'Dune', shelf: { row: 3 } } },
    });
  });

  it('refuses sibling fragments whose fields differ in shape in the supergraph', async () => {
    const response = await shop().send({ query: '{ products { ... on Book { shelf { row } } ... on Game { shelf: title } } }' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      expect.objectContaining({
        message: 'Fields "shelf" conflict because they return conflicting types "Shelf" and "String!". Use different aliases on the fields to fetch both if this was intentional.',
      }),
    ]);
  });
});
