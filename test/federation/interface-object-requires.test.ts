/**
 * `@requires` on a field an `@interfaceObject` subgraph adds: the router
 * calls that subgraph back with the required fields, and the representation
 * must name the interface (the only type it knows), even when the client's
 * selection already told the router the object's real type (`__typename`,
 * a concrete fragment).
 */
import { describe, expect, it } from 'vitest';
import type { SubgraphOptions } from '../../src/testing/index.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const LINK = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@external", "@requires", "@interfaceObject"])`;

type Row = { __typename: 'Personal' | 'Business'; id: string; currency: string; owner?: string; company?: string };
const account = (id: string): Row =>
  Number(id) % 2 === 1 ? { __typename: 'Personal', id, currency: 'EUR', owner: `owner${id}` } : { __typename: 'Business', id, currency: 'USD', company: `co${id}` };

const subgraphs = (): SubgraphOptions[] => [
  {
    name: 'accounts',
    typeDefs: `${LINK}
        interface Account @key(fields: "id") { id: ID! currency: String }
        type Personal implements Account @key(fields: "id") { id: ID! currency: String owner: String! }
        type Business implements Account @key(fields: "id") { id: ID! currency: String company: String! }
        type Query { accounts: [Account!]! }`,
    resolvers: {
      Query: { accounts: () => ['1', '2'].map(account) },
      Account: { __resolveReference: (ref: { id: string }) => account(ref.id), __resolveType: (row: Row) => row.__typename },
      Personal: { __resolveReference: (ref: { id: string }) => account(ref.id) },
      Business: { __resolveReference: (ref: { id: string }) => account(ref.id) },
    },
  },
  {
    name: 'balances',
    typeDefs: `${LINK}
        type Account @key(fields: "id") @interfaceObject { id: ID! currency: String @external balance: String @requires(fields: "currency") }
        type Query { richest: Account richList: [Account!]! }`,
    resolvers: {
      Query: { richest: () => ({ id: '2' }), richList: () => [{ id: '1' }, { id: '2' }] },
      Account: { __resolveReference: (ref: { id: string }) => ref, balance: (row: { id: string; currency: string }) => `${row.id} ${row.currency}` },
    },
  },
];

const graph = useFederatedGraph(subgraphs, { composition: 'apollo' });

describe('@requires on an @interfaceObject field', () => {
  it('is answered when the client also selects __typename or a concrete fragment', async () => {
    expect(await graph().query('{ richest { __typename balance } }')).toEqual({ data: { richest: { __typename: 'Business', balance: '2 USD' } } });
    expect(await graph().query('{ richest { ... on Business { company } balance } }')).toEqual({ data: { richest: { company: 'co2', balance: '2 USD' } } });
    expect(await graph().query('{ richList { t: __typename id balance } }')).toEqual({
      data: {
        richList: [
          { t: 'Personal', id: '1', balance: '1 EUR' },
          { t: 'Business', id: '2', balance: '2 USD' },
        ],
      },
    });
    // The interface object subgraph was asked with the interface's name, the only one it knows.
    const typenames = graph()
      .representations('balances')
      .flat()
      .map((representation) => (representation as { __typename: string }).__typename);
    expect(new Set(typenames)).toEqual(new Set(['Account']));
  });
});
