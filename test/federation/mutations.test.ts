import { beforeEach, describe, expect, it } from 'vitest';
import { bankGraph } from './graphs/bank.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const log: string[] = [];
const graph = useFederatedGraph(() => bankGraph(log));
beforeEach(() => void log.splice(0));

describe('mutations', () => {
  it('runs mutation fields one after the other across subgraphs, each with its entity jumps, before the next', async () => {
    const response = await graph().query(/* GraphQL */ `
      mutation {
        first: deposit(account: "acc1", cents: 100) { balanceCents owner }
        sent: notify(account: "acc1", text: "hi") { text account { balanceCents } }
        second: withdraw(account: "acc1", cents: 30) { balanceCents notices { text } }
      }
    `);
    expect(response).toEqual({
      data: {
        first: { balanceCents: 1100, owner: 'Ana' },
        sent: { text: 'hi', account: { balanceCents: 1100 } },
        second: { balanceCents: 1070, notices: [{ text: 'hi' }] },
      },
    });
    expect(log).toEqual([
      'ledger: deposit 100 to acc1',
      'people: owner of acc1',
      'notices: notify acc1',
      'ledger: balance of acc1',
      'ledger: withdraw 30 from acc1',
      'notices: notices of acc1',
    ]);
  });

  it('keeps running later mutation fields after a nullable one fails, with the error at its path', async () => {
    const response = await graph().query(/* GraphQL */ `
      mutation {
        a: deposit(account: "acc2", cents: 1) { balanceCents }
        b: withdraw(account: "acc2", cents: 1000) { balanceCents }
        c: deposit(account: "acc2", cents: 3) { balanceCents owner }
      }
    `);
    expect(response).toEqual({
      data: { a: { balanceCents: 51 }, b: null, c: { balanceCents: 54, owner: 'Ben' } },
      errors: [{ message: 'insufficient funds in acc2', path: ['b'] }],
    });
    expect(log).toEqual(['ledger: deposit 1 to acc2', 'ledger: withdraw 1000 from acc2', 'ledger: deposit 3 to acc2', 'people: owner of acc2']);
  });

  it('sends consecutive mutation fields of one subgraph in one call, in order', async () => {
    await graph().query('mutation { a: deposit(account: "acc3", cents: 5) { id } b: withdraw(account: "acc3", cents: 2) { balanceCents } }');
    expect(graph().calls('ledger')).toHaveLength(1);
    expect(log).toEqual(['ledger: deposit 5 to acc3', 'ledger: withdraw 2 from acc3']);
  });

  it("finishes a mutation field's selections from other subgraphs before the next field of the same subgraph runs", async () => {
    const response = await graph().query(/* GraphQL */ `
      mutation {
        a: deposit(account: "acc3", cents: 5) { balanceCents owner }
        b: withdraw(account: "acc3", cents: 2) { balanceCents }
        c: deposit(account: "acc3", cents: 1) { balanceCents }
      }
    `);
    const { a, b, c } = (response as { data: Record<'a' | 'b' | 'c', { balanceCents: number; owner?: string }> }).data;
    expect([a.owner, b.balanceCents - a.balanceCents, c.balanceCents - b.balanceCents]).toEqual(['Chen', -2, 1]);
    // b and c need nothing else: they still share a call.
    expect(log).toEqual(['ledger: deposit 5 to acc3', 'people: owner of acc3', 'ledger: withdraw 2 from acc3', 'ledger: deposit 1 to acc3']);
    expect(graph().calls('ledger')).toHaveLength(2);
  });

  it('nulls the whole response when a non-null mutation field fails', async () => {
    expect(await graph().query('mutation { a: deposit(account: "nope", cents: 1) { balanceCents } }')).toEqual({
      data: null,
      errors: [{ message: 'no account nope', path: ['a'] }],
    });
  });

  it('runs no later mutation field once a non-null one has failed', async () => {
    const response = await graph().query('mutation { a: deposit(account: "nope", cents: 1) { balanceCents } b: notify(account: "acc3", text: "never") { text } }');
    expect(response).toEqual({
      data: null,
      errors: [{ message: 'no account nope', path: ['a'] }],
    });
    expect(log).toEqual(['ledger: deposit 1 to nope']);
    expect(graph().calls('notices')).toHaveLength(0);
  });

  it('runs no later mutation field once a non-null one is nulled by a failing field of another subgraph', async () => {
    // notify answers, but people knows no owner of "ghost": owner (String!) -> account (Account!) -> a (Notice!) -> data null.
    const response = await graph().query('mutation { a: notify(account: "ghost", text: "hi") { text account { owner } } b: deposit(account: "acc3", cents: 7) { balanceCents } }');
    expect(response).toMatchObject({ data: null, errors: [{ path: ['a', 'account', 'owner'] }] });
    expect(log).toEqual(['notices: notify ghost', 'people: owner of ghost']);
    expect(graph().calls('ledger')).toHaveLength(0);
  });

  it('answers __typename on the mutation root and on what mutations return', async () => {
    expect(await graph().query('mutation { __typename n: notify(account: "acc3", text: "x") { __typename account { __typename owner } } }')).toEqual({
      data: { __typename: 'Mutation', n: { __typename: 'Notice', account: { __typename: 'Account', owner: 'Chen' } } },
    });
  });
});
