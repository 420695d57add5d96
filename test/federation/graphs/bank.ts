/**
 * A bank, a graph built around mutations: `ledger` moves money, `notices`
 * sends messages, `people` knows account owners. Every subgraph writes what
 * it does into one shared log, so tests can check the order across subgraphs.
 * `ledger` answers slowly, so mutations run in parallel would log out of order.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function ledgerSubgraph(log: string[]): SubgraphOptions {
  const balances = new Map([
    ['acc1', 1000],
    ['acc2', 50],
    ['acc3', 0],
  ]);
  const move = async (id: string, cents: number) => {
    await sleep(25);
    const balance = balances.get(id);
    if (balance === undefined) throw new Error(`no account ${id}`);
    if (balance + cents < 0) throw new Error(`insufficient funds in ${id}`);
    balances.set(id, balance + cents);
    return { id, balanceCents: balance + cents };
  };
  return {
    name: 'ledger',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query { account(id: ID!): Account }
      type Mutation {
        deposit(account: ID!, cents: Int!): Account!
        withdraw(account: ID!, cents: Int!): Account
      }
      type Account @key(fields: "id") { id: ID! balanceCents: Int! }
    `,
    resolvers: {
      Query: { account: (_: unknown, { id }: { id: string }) => (balances.has(id) ? { id, balanceCents: balances.get(id) } : null) },
      Mutation: {
        deposit: async (_: unknown, { account, cents }: { account: string; cents: number }) => {
          log.push(`ledger: deposit ${cents} to ${account}`);
          return move(account, cents);
        },
        withdraw: async (_: unknown, { account, cents }: { account: string; cents: number }) => {
          log.push(`ledger: withdraw ${cents} from ${account}`);
          return move(account, -cents);
        },
      },
      Account: {
        __resolveReference: (ref: { id: string }) => {
          log.push(`ledger: balance of ${ref.id}`);
          return { id: ref.id, balanceCents: balances.get(ref.id) };
        },
      },
    },
  };
}

export function noticesSubgraph(log: string[]): SubgraphOptions {
  const notices: Array<{ id: string; accountId: string; text: string }> = [];
  return {
    name: 'notices',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Mutation { notify(account: ID!, text: String!): Notice! }
      type Notice { id: ID! text: String! account: Account! }
      type Account @key(fields: "id") { id: ID! notices: [Notice!]! }
    `,
    resolvers: {
      Mutation: {
        notify: (_: unknown, { account, text }: { account: string; text: string }) => {
          log.push(`notices: notify ${account}`);
          const notice = { id: `n${notices.length + 1}`, accountId: account, text };
          notices.push(notice);
          return notice;
        },
      },
      Notice: { account: (notice: { accountId: string }) => ({ id: notice.accountId }) },
      Account: {
        __resolveReference: (ref: { id: string }) => {
          log.push(`notices: notices of ${ref.id}`);
          return ref;
        },
        notices: (account: { id: string }) => notices.filter((n) => n.accountId === account.id),
      },
    },
  };
}

export function peopleSubgraph(log: string[]): SubgraphOptions {
  const owners = new Map([
    ['acc1', 'Ana'],
    ['acc2', 'Ben'],
    ['acc3', 'Chen'],
  ]);
  return {
    name: 'people',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Account @key(fields: "id") { id: ID! owner: String! }
    `,
    resolvers: {
      Account: {
        __resolveReference: (ref: { id: string }) => {
          log.push(`people: owner of ${ref.id}`);
          return { id: ref.id, owner: owners.get(ref.id) };
        },
      },
    },
  };
}

/** The bank's subgraphs, logging into `log`. */
export function bankGraph(log: string[] = []): SubgraphOptions[] {
  return [ledgerSubgraph(log), noticesSubgraph(log), peopleSubgraph(log)];
}
