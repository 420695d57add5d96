import { describe, expect, it } from 'vitest';
import { accountGraph, accountGraphWithRisk } from './graphs/accounts.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(accountGraph);
const withRisk = useFederatedGraph(accountGraphWithRisk, { composition: 'apollo' });

describe('@interfaceObject', () => {
  it('adds the interface object subgraph’s fields to every implementation, sending the interface as __typename', async () => {
    expect(await graph().query('{ accounts { id email plan balanceCents } }')).toEqual({
      data: {
        accounts: [
          { id: 'u1', email: 'ada@example.com', plan: 'PRO', balanceCents: 0 },
          { id: 'u2', email: 'bob@shop.biz', plan: 'FREE', balanceCents: 4500 },
          { id: 't1', email: 'ops@example.com', plan: 'PRO', balanceCents: 12000 },
        ],
      },
    });
    expect(graph().representations('billing').flat()).toEqual(
      expect.arrayContaining([
        { __typename: 'Account', id: 'u1' },
        { __typename: 'Account', id: 'u2' },
        { __typename: 'Account', id: 't1' },
      ]),
    );
    expect(graph().representations('billing').flat()).toHaveLength(3);
  });

  it('asks the interface’s owner for the concrete __typename of objects the interface object returned', async () => {
    expect(await graph().query('{ overdue { __typename id } }')).toEqual({
      data: {
        overdue: [
          { __typename: 'Team', id: 't1' },
          { __typename: 'User', id: 'u2' },
        ],
      },
    });
    expect(graph().representations('identity')).toEqual([
      [
        { __typename: 'Account', id: 't1' },
        { __typename: 'Account', id: 'u2' },
      ],
    ]);
  });

  it('answers fragments on concrete types under a field of the interface object subgraph', async () => {
    expect(await graph().query('{ overdue { plan ... on User { name } ... on Team { seats email } } }')).toEqual({
      data: {
        overdue: [
          { plan: 'PRO', seats: 12, email: 'ops@example.com' },
          { plan: 'FREE', name: 'Bob' },
        ],
      },
    });
    expect(graph().calls('identity')).toHaveLength(1);
  });

  it('fetches interface fields of the owner for objects the interface object returned', async () => {
    expect(await graph().query('{ overdue { email balanceCents } }')).toEqual({
      data: {
        overdue: [
          { email: 'ops@example.com', balanceCents: 12000 },
          { email: 'bob@shop.biz', balanceCents: 4500 },
        ],
      },
    });
  });

  it('keeps fragments on the interface itself and on implementations apart', async () => {
    expect(await graph().query('{ overdue { __typename ... on Account { id plan } ... on User { name } } }')).toEqual({
      data: {
        overdue: [
          { __typename: 'Team', id: 't1', plan: 'PRO' },
          { __typename: 'User', id: 'u2', plan: 'FREE', name: 'Bob' },
        ],
      },
    });
  });
});

describe('@interfaceObject with @requires', () => {
  it('sends the owner’s field, fetched first, to the interface object subgraph', async () => {
    expect(await withRisk().query('{ overdue { id risk } }')).toEqual({
      data: {
        overdue: [
          { id: 't1', risk: 'LOW' },
          { id: 'u2', risk: 'HIGH' },
        ],
      },
    });
    expect(withRisk().representations('identity')).toEqual([
      [
        { __typename: 'Account', id: 't1' },
        { __typename: 'Account', id: 'u2' },
      ],
    ]);
    expect(withRisk().representations('billing')).toEqual([
      [
        { __typename: 'Account', id: 't1', email: 'ops@example.com' },
        { __typename: 'Account', id: 'u2', email: 'bob@shop.biz' },
      ],
    ]);
  });

  it('resolves a requiring field for accounts reached through another subgraph’s concrete type', async () => {
    expect(await withRisk().query('{ openTickets { subject requester { name plan risk } } }')).toEqual({
      data: {
        openTickets: [
          { subject: 'Cannot log in', requester: { name: 'Bob', plan: 'FREE', risk: 'HIGH' } },
          { subject: 'Invoice copy', requester: { name: 'Ada', plan: 'PRO', risk: 'LOW' } },
        ],
      },
    });
    expect(withRisk().calls('billing')).toHaveLength(1);
  });
});

describe('entity interfaces (@key on an interface)', () => {
  it('jumps from an interface root field to a subgraph that extends one implementation', async () => {
    expect(await graph().query('{ accounts { id ... on User { tickets { subject } } } }')).toEqual({
      data: {
        accounts: [{ id: 'u1', tickets: [{ subject: 'Invoice copy' }] }, { id: 'u2', tickets: [{ subject: 'Cannot log in' }] }, { id: 't1' }],
      },
    });
    expect(graph().representations('support')).toEqual([
      [
        { __typename: 'User', id: 'u1' },
        { __typename: 'User', id: 'u2' },
      ],
    ]);
  });

  it('reaches interface fields and interface object fields from a concrete type in a third subgraph', async () => {
    expect(await graph().query('{ openTickets { requester { __typename email plan } } }')).toEqual({
      data: {
        openTickets: [{ requester: { __typename: 'User', email: 'bob@shop.biz', plan: 'FREE' } }, { requester: { __typename: 'User', email: 'ada@example.com', plan: 'PRO' } }],
      },
    });
    expect(graph().representations('billing')).toEqual([
      [
        { __typename: 'Account', id: 'u2' },
        { __typename: 'Account', id: 'u1' },
      ],
    ]);
  });

  it('answers an interface root field with a type condition on one implementation', async () => {
    expect(await graph().query('{ account(id: "t1") { __typename email ... on Team { seats } ... on User { name } } }')).toEqual({
      data: { account: { __typename: 'Team', email: 'ops@example.com', seats: 12 } },
    });
    expect(graph().calls('billing')).toEqual([]);
  });
});
