import { describe, expect, it } from 'vitest';
import { musicGraph } from './graphs/music.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(musicGraph);

describe('@provides', () => {
  it('reads a provided field from the providing subgraph: the owner receives no call', async () => {
    expect(await graph().query('{ chart { title artist { name } } }')).toEqual({
      data: {
        chart: [
          { title: 'Pastel Blues', artist: { name: 'Nina Simone' } },
          { title: 'Zombie', artist: { name: 'Fela Kuti' } },
        ],
      },
    });
    expect(graph().calls('catalog')).toHaveLength(1);
    expect(graph().calls('artists')).toEqual([]);
  });

  it('still asks the owner for the fields the path does not provide, and only for those', async () => {
    expect(await graph().query('{ chart { artist { name country } } }')).toEqual({
      data: { chart: [{ artist: { name: 'Nina Simone', country: 'US' } }, { artist: { name: 'Fela Kuti', country: 'NG' } }] },
    });
    expect(graph().calls('artists')).toHaveLength(1);
    expect(graph().calls('artists')[0]!.query).not.toContain('name');
    expect(graph().representations('artists')).toEqual([
      [
        { __typename: 'Artist', id: 'ar1' },
        { __typename: 'Artist', id: 'ar2' },
      ],
    ]);
  });

  it('does not use a provided field off the providing path', async () => {
    expect(await graph().query('{ albums { artist { name } } }')).toEqual({
      data: { albums: [{ artist: { name: 'Nina Simone' } }, { artist: { name: 'Fela Kuti' } }] },
    });
    expect(graph().calls('artists')).toHaveLength(1);
  });

  it('uses fields provided on the members of a union', async () => {
    expect(await graph().query('{ queue { __typename ... on Song { title } ... on Podcast { title } } }')).toEqual({
      data: {
        queue: [
          { __typename: 'Song', title: 'Sinnerman' },
          { __typename: 'Podcast', title: 'Liner Notes' },
          { __typename: 'Song', title: 'Water No Get Enemy' },
        ],
      },
    });
    expect(graph().calls('radio')).toHaveLength(1);
    expect(graph().calls('catalog')).toEqual([]);
  });

  it('jumps only for the union member whose non-provided field is asked for', async () => {
    expect(await graph().query('{ queue { ... on Song { title } ... on Podcast { title host } } }')).toEqual({
      data: { queue: [{ title: 'Sinnerman' }, { title: 'Liner Notes', host: 'Ada' }, { title: 'Water No Get Enemy' }] },
    });
    expect(graph().representations('catalog')).toEqual([[{ __typename: 'Podcast', id: 'pc1' }]]);
  });

  it('uses fields provided on the implementations of an interface, selected on the interface itself', async () => {
    expect(await graph().query('{ onAir { __typename id title ... on Song { plays } } }')).toEqual({
      data: { onAir: { __typename: 'Song', id: 's1', title: 'Sinnerman', plays: 120 } },
    });
    expect(graph().calls('radio')).toHaveLength(1);
    expect(graph().calls('catalog')).toEqual([]);
  });

  it('fetches an interface field from its owner where nothing provides it', async () => {
    expect(await graph().query('{ history { __typename title } }')).toEqual({
      data: {
        history: [
          { __typename: 'Podcast', title: 'Liner Notes' },
          { __typename: 'Song', title: 'Water No Get Enemy' },
        ],
      },
    });
    expect(graph().representations('catalog').flat()).toEqual(
      expect.arrayContaining([
        { __typename: 'Podcast', id: 'pc1' },
        { __typename: 'Song', id: 's2' },
      ]),
    );
    expect(graph().representations('catalog').flat()).toHaveLength(2);
  });
});

describe('@skip and @include on fields that start jumps', () => {
  const albumsWithCountry = 'query($withCountry: Boolean!) { albums { title artist @include(if: $withCountry) { country } } }';

  it('makes no jump for an excluded field', async () => {
    expect(await graph().query(albumsWithCountry, { withCountry: false })).toEqual({ data: { albums: [{ title: 'Pastel Blues' }, { title: 'Zombie' }] } });
    expect(graph().calls('artists')).toEqual([]);
    expect(graph().calls('catalog')[0]!.query).not.toContain('artist');
  });

  it('makes the jump when the same operation includes the field', async () => {
    expect(await graph().query(albumsWithCountry, { withCountry: true })).toEqual({
      data: {
        albums: [
          { title: 'Pastel Blues', artist: { country: 'US' } },
          { title: 'Zombie', artist: { country: 'NG' } },
        ],
      },
    });
    expect(graph().calls('artists')).toHaveLength(1);
  });

  it('asks the other subgraph only for the fields not skipped', async () => {
    expect(await graph().query('query($skip: Boolean!) { albums { artist { name country @skip(if: $skip) } } }', { skip: true })).toEqual({
      data: { albums: [{ artist: { name: 'Nina Simone' } }, { artist: { name: 'Fela Kuti' } }] },
    });
    expect(graph().calls('artists')[0]!.query).not.toContain('country');
  });

  it('honours @skip and @include on inline fragments of an abstract type', async () => {
    const history = 'query($songs: Boolean!) { history { ... on Song @include(if: $songs) { seconds } ... on Podcast @skip(if: $songs) { host } } }';
    expect(await graph().query(history, { songs: true })).toEqual({ data: { history: [{}, { seconds: 596 }] } });
    expect(graph().representations('catalog')).toEqual([[{ __typename: 'Song', id: 's2' }]]);
    expect(await graph().query(history, { songs: false })).toEqual({ data: { history: [{ host: 'Ada' }, {}] } });
  });

  it('drops a skipped root field and its subgraph call', async () => {
    expect(await graph().query('query($hide: Boolean!) { albums @skip(if: $hide) { title } queue { ... on Song { title } } }', { hide: true })).toEqual({
      data: { queue: [{ title: 'Sinnerman' }, {}, { title: 'Water No Get Enemy' }] },
    });
    expect(graph().calls('catalog')).toEqual([]);
  });
});
