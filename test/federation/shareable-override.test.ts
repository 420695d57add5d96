import { describe, expect, it } from 'vitest';
import { loanGraph } from './graphs/loans.js';
import { weatherGraph } from './graphs/weather.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const weather = useFederatedGraph(weatherGraph);
const loans = useFederatedGraph(loanGraph);

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
