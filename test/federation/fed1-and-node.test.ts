import { describe, expect, it } from 'vitest';
import { libraryGraph } from './graphs/library.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(libraryGraph);

describe('a Federation 1 subgraph next to a Federation 2 one', () => {
  it('extends an entity of the other subgraph through its @external key', async () => {
    expect(await graph().query('{ nodes { __typename id ... on Book { reviews { stars } } } }')).toEqual({
      data: {
        nodes: [
          { __typename: 'Book', id: 'bk1', reviews: [{ stars: 5 }] },
          { __typename: 'Book', id: 'bk2', reviews: [{ stars: 3 }] },
          { __typename: 'Author', id: 'au1' },
        ],
      },
    });
    expect(graph().representations('reviews')).toEqual([
      [
        { __typename: 'Book', id: 'bk1' },
        { __typename: 'Book', id: 'bk2' },
      ],
    ]);
  });

  it('uses a field its @provides gives two levels below the entity, without calling the owner', async () => {
    expect(await graph().query('{ node(id: "bk1") { id ... on Book { title reviews { stars by { name } } } } }')).toEqual({
      data: { node: { id: 'bk1', title: 'Solaris', reviews: [{ stars: 5, by: { name: 'Stanisław Lem' } }] } },
    });
    expect(graph().calls('catalogue')).toHaveLength(1);
  });
});

describe('a Node interface with links back to nodes', () => {
  it('answers node(id:) with the concrete type', async () => {
    expect(await graph().query('{ node(id: "au1") { id __typename ... on Author { name } } }')).toEqual({
      data: { node: { id: 'au1', __typename: 'Author', name: 'Stanisław Lem' } },
    });
  });

  it('follows a circular reference through the interface and jumps from inside it', async () => {
    expect(await graph().query('{ node(id: "bk1") { ... on Book { related { id ... on Book { title reviews { stars } related { id } } ... on Author { name } } } } }')).toEqual({
      data: {
        node: {
          related: [
            { id: 'au1', name: 'Stanisław Lem' },
            { id: 'bk2', title: 'Fiasco', reviews: [{ stars: 3 }], related: [{ id: 'bk1' }] },
          ],
        },
      },
    });
    expect(graph().representations('reviews')).toEqual([[{ __typename: 'Book', id: 'bk2' }]]);
  });
});
