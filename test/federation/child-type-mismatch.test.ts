import { describe, expect, it } from 'vitest';
import { shopGraph } from './graphs/shop.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(shopGraph);

describe('child type mismatches', () => {
  it('answers sibling fragments selecting a field non-null on one type and nullable on the other in the subgraph', async () => {
    expect(await graph().query('{ products { ... on Book { code } ... on Game { code } } }')).toEqual({
      data: { products: [{ code: 'ISBN-1' }, { code: null }] },
    });
    expect(graph().calls('store')).toHaveLength(1);
  });

  it('keeps the field apart from its sibling while also jumping for another field', async () => {
    expect(await graph().query('{ products { __typename ... on Book { code title shelf { row label } } ... on Game { code players } } }')).toEqual({
      data: {
        products: [
          { __typename: 'Book', code: 'ISBN-1', title: 'Dune', shelf: { row: 3, label: 'Sci-fi' } },
          { __typename: 'Game', code: null, players: 2 },
        ],
      },
    });
    expect(graph().representations('labels')).toEqual([[{ __typename: 'Book', id: 'bk1' }]]);
  });

  it('reads the nullable variant from the subgraph that has it nullable', async () => {
    expect(await graph().query('{ bestseller { code title shelf { row } } }')).toEqual({
      data: { bestseller: { code: 'ISBN-1', title: 'Dune', shelf: { row: 3 } } },
    });
  });

  it('refuses sibling fragments whose fields differ in shape in the supergraph', async () => {
    const response = await graph().send({ query: '{ products { ... on Book { shelf { row } } ... on Game { shelf: title } } }' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      expect.objectContaining({
        message:
          'Fields "shelf" conflict because they return conflicting types "Shelf" and "String!". Use different aliases on the fields to fetch both if this was intentional.',
      }),
    ]);
  });
});
