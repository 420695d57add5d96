import { describe, expect, it } from 'vitest';
import type { SubgraphOptions } from '../../src/testing/index.js';
import { loanGraph } from './graphs/loans.js';
import { weatherGraph } from './graphs/weather.js';
import { linkFederation } from './support/sdl.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const weather = useFederatedGraph(weatherGraph);
const loans = useFederatedGraph(loanGraph);

/** Every mutation the counters graph runs, in the order the subgraphs ran them. */
const counterLog: string[] = [];

/** `tally` and `audit` both resolve `Mutation.ping` (`@shareable`); `bump` is only in tally, `note` only in audit. */
function countersGraph(): SubgraphOptions[] {
  const subgraph = (name: string, own: string): SubgraphOptions => ({
    name,
    typeDefs: `${linkFederation('shareable')} type Query { ${name}: Int! } type Mutation { ping: String! @shareable ${own}: String! }`,
    resolvers: {
      Query: { [name]: () => 0 },
      Mutation: {
        ping: () => {
          counterLog.push(`${name}: ping`);
          return name;
        },
        [own]: () => {
          counterLog.push(`${name}: ${own}`);
          return name;
        },
      },
    },
  });
  return [subgraph('tally', 'bump'), subgraph('audit', 'note')];
}

const counters = useFederatedGraph(countersGraph);

describe('@shareable', () => {
  it('sends a root field served by several subgraphs to the one that answers the whole selection', async () => {
    expect(await weather().query('{ stations { name outlook } }')).toEqual({
      data: {
        stations: [
          { name: 'Harbour', outlook: ['rain', 'sun'] },
          { name: 'Summit', outlook: ['snow'] },
        ],
      },
    });
    expect(weather().calls('forecasts')).toHaveLength(1);
    expect(weather().calls('observations')).toEqual([]);
  });

  it('joins a shareable root field to the fetch of a root field only one subgraph has', async () => {
    expect(await weather().query('{ stations { name latest { observedAt } } units }')).toEqual({
      data: {
        stations: [
          { name: 'Harbour', latest: { observedAt: '06:00' } },
          { name: 'Summit', latest: { observedAt: '06:10' } },
        ],
        units: 'metric',
      },
    });
    expect(weather().calls('observations')).toHaveLength(1);
    expect(weather().calls('forecasts')).toEqual([]);
  });

  it('joins that fetch even when the shareable root field comes first and selects fields both subgraphs have', async () => {
    expect(await weather().query('{ stations { id name } units }')).toEqual({
      data: {
        stations: [
          { id: 'st1', name: 'Harbour' },
          { id: 'st2', name: 'Summit' },
        ],
        units: 'metric',
      },
    });
    expect(weather().calls('observations')).toHaveLength(1);
    expect(weather().calls('forecasts')).toEqual([]);
  });

  it('keeps one call per subgraph when the shareable field needs a field the other subgraph lacks', async () => {
    expect(await weather().query('{ stations { outlook } units }')).toEqual({
      data: { stations: [{ outlook: ['rain', 'sun'] }, { outlook: ['snow'] }], units: 'metric' },
    });
    expect(weather().calls('forecasts')).toHaveLength(1);
    expect(weather().calls('observations')).toHaveLength(1);
    expect(weather().representations('observations')).toEqual([]);
  });

  it("runs a shareable mutation field in its neighbour's call, keeping the fields' order", async () => {
    counterLog.length = 0;
    expect(await counters().query('mutation { a: bump b: ping c: bump d: note e: ping }')).toEqual({ data: { a: 'tally', b: 'tally', c: 'tally', d: 'audit', e: 'audit' } });
    expect(counterLog).toEqual(['tally: bump', 'tally: ping', 'tally: bump', 'audit: note', 'audit: ping']);
    expect(counters().calls('tally')).toHaveLength(1);
    expect(counters().calls('audit')).toHaveLength(1);
  });
});

describe('parent entity calls (a value type without a key, nested in an entity)', () => {
  it('merges a value type whose fields are split across subgraphs, re-fetching its parent entity for the rest', async () => {
    expect(await weather().query('{ stations { latest { celsius observedAt humidity } } }')).toEqual({
      data: {
        stations: [{ latest: { celsius: 14.5, observedAt: '06:00', humidity: 81 } }, { latest: { celsius: -3, observedAt: '06:10', humidity: 40 } }],
      },
    });
    const entityCalls = [...weather().representations('observations'), ...weather().representations('forecasts')];
    expect(entityCalls).toEqual([
      [
        { __typename: 'Station', id: 'st1' },
        { __typename: 'Station', id: 'st2' },
      ],
    ]);
  });

  it('merges a value type nested two levels inside the parent entity', async () => {
    expect(await weather().query('{ stations { id latest { wind { knots direction } } } }')).toEqual({
      data: {
        stations: [
          { id: 'st1', latest: { wind: { knots: 12, direction: 'NW' } } },
          { id: 'st2', latest: { wind: { knots: 35, direction: 'N' } } },
        ],
      },
    });
    expect(weather().calls('observations')).toHaveLength(1);
    expect(weather().calls('forecasts')).toHaveLength(1);
  });
});

describe('@override', () => {
  it('reads overridden fields from the overriding subgraph only, never from the one overridden', async () => {
    expect(await loans().query('{ members { name fineCents } }')).toEqual({
      data: {
        members: [
          { name: 'Iris', fineCents: 0 },
          { name: 'Omar', fineCents: 250 },
        ],
      },
    });
    expect(loans().calls('legacy')).toHaveLength(1);
    expect(loans().calls('legacy')[0]!.query).not.toContain('fineCents');
  });

  it('sends an overridden root field to the overriding subgraph', async () => {
    expect(await loans().query('{ overdueCount }')).toEqual({ data: { overdueCount: 1 } });
    expect(loans().calls('legacy')).toEqual([]);
  });

  it('keeps a field that overrides a subgraph not in the graph where it is', async () => {
    expect(await loans().query('{ members { id tier } }')).toEqual({
      data: {
        members: [
          { id: 'm1', tier: 'gold' },
          { id: 'm2', tier: 'basic' },
        ],
      },
    });
    expect(loans().representations('loans')).toEqual([
      [
        { __typename: 'Member', id: 'm1' },
        { __typename: 'Member', id: 'm2' },
      ],
    ]);
  });
});
