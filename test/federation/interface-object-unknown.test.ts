/**
 * An interface object subgraph returns an object its interface's owner does
 * not know (the owner resolves it to null). Its interface's own fields are
 * still served; asked which object type it is (__typename, a fragment on an
 * implementation), it has no answer: null with an error, never the
 * interface's name as a __typename (Apollo Gateway answers null too).
 */
import { describe, expect, it } from 'vitest';
import type { SubgraphOptions } from '../../src/testing/index.js';
import { linkFederation } from './support/sdl.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const PEOPLE = new Map([['p1', { __typename: 'Person', id: 'p1', name: 'Ada' }]]);

function subgraphs(): SubgraphOptions[] {
  return [
    {
      name: 'accounts',
      typeDefs: /* GraphQL */ `
        ${linkFederation('key')}
        type Query { customers: [Customer] }
        interface Customer @key(fields: "id") { id: ID! name: String }
        type Person implements Customer @key(fields: "id") { id: ID! name: String }
      `,
      resolvers: {
        Query: { customers: () => [...PEOPLE.values()] },
        Customer: { __resolveReference: (ref: { id: string }) => PEOPLE.get(ref.id) ?? null, __resolveType: (c: { __typename: string }) => c.__typename },
        Person: { __resolveReference: (ref: { id: string }) => PEOPLE.get(ref.id) ?? null },
      },
    },
    {
      name: 'orders',
      typeDefs: /* GraphQL */ `
        ${linkFederation('key', 'interfaceObject')}
        type Query { recent: [Customer] }
        type Customer @key(fields: "id") @interfaceObject { id: ID! orders: Int }
      `,
      resolvers: {
        Query: {
          recent: () => [
            { id: 'p1', orders: 2 },
            { id: 'p9', orders: 5 },
          ],
        },
      },
    },
  ];
}

const graph = useFederatedGraph(subgraphs);

describe('an interface object its owner does not know', () => {
  it('is null with an error when __typename is asked', async () => {
    expect(await graph().query('{ recent { __typename id } }')).toEqual({
      data: { recent: [{ __typename: 'Person', id: 'p1' }, null] },
      errors: [{ message: 'Abstract type "Customer" could not be resolved to an object type: the subgraph that owns it does not know this object.', path: ['recent', 1] }],
    });
  });

  it('is null with an error when a fragment on an implementation is asked', async () => {
    expect(await graph().query('{ recent { id orders ... on Person { name } } }')).toMatchObject({
      data: { recent: [{ id: 'p1', orders: 2, name: 'Ada' }, null] },
    });
  });

  it("keeps serving the interface object's own fields when no object type is asked", async () => {
    expect(await graph().query('{ recent { id orders } }')).toEqual({
      data: {
        recent: [
          { id: 'p1', orders: 2 },
          { id: 'p9', orders: 5 },
        ],
      },
    });
  });
});
