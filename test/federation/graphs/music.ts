/**
 * Music, a graph built around `@provides`: `catalog` provides the artist's
 * name on its chart, `radio` provides titles on a union and on an interface it
 * returns; the subgraphs owning those fields must not be asked for them.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const ARTISTS = [
  { id: 'ar1', name: 'Nina Simone', country: 'US' },
  { id: 'ar2', name: 'Fela Kuti', country: 'NG' },
];
const ALBUMS = [
  { id: 'al1', title: 'Pastel Blues', artistId: 'ar1' },
  { id: 'al2', title: 'Zombie', artistId: 'ar2' },
];
const SONGS = [
  { id: 's1', title: 'Sinnerman', seconds: 622 },
  { id: 's2', title: 'Water No Get Enemy', seconds: 596 },
];
const PODCASTS = [{ id: 'pc1', title: 'Liner Notes', host: 'Ada' }];

/** Owns artists. */
export function artistsSubgraph(): SubgraphOptions {
  return {
    name: 'artists',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Artist @key(fields: "id") { id: ID! name: String! @shareable country: String! }
    `,
    resolvers: {
      Artist: { __resolveReference: (ref: { id: string }) => ARTISTS.find((a) => a.id === ref.id) ?? null },
    },
  };
}

/** Owns albums, songs and podcasts; its chart provides the artist's name. */
export function catalogSubgraph(): SubgraphOptions {
  const artist = (album: { artistId: string }) => {
    const found = ARTISTS.find((a) => a.id === album.artistId)!;
    return { id: found.id, name: found.name };
  };
  return {
    name: 'catalog',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable', 'external', 'provides')}
      type Query {
        albums: [Album!]!
        chart: [Album!]! @provides(fields: "artist { name }")
      }
      type Album @key(fields: "id") { id: ID! title: String! artist: Artist! }
      type Artist @key(fields: "id") { id: ID! name: String! @external }
      type Song @key(fields: "id") { id: ID! title: String! @shareable seconds: Int! }
      type Podcast @key(fields: "id") { id: ID! title: String! @shareable host: String! }
    `,
    resolvers: {
      Query: { albums: () => ALBUMS.map((a) => ({ ...a, artist: { id: a.artistId } })), chart: () => ALBUMS.map((a) => ({ ...a, artist: artist(a) })) },
      Album: { __resolveReference: (ref: { id: string }) => ALBUMS.find((a) => a.id === ref.id) ?? null },
      Song: { __resolveReference: (ref: { id: string }) => SONGS.find((s) => s.id === ref.id) ?? null },
      Podcast: { __resolveReference: (ref: { id: string }) => PODCASTS.find((p) => p.id === ref.id) ?? null },
    },
  };
}

/** A radio station: its queue (a union) and what is on air (an interface) provide titles. */
export function radioSubgraph(): SubgraphOptions {
  const queue = [
    { __typename: 'Song', id: 's1', title: 'Sinnerman' },
    { __typename: 'Podcast', id: 'pc1', title: 'Liner Notes' },
    { __typename: 'Song', id: 's2', title: 'Water No Get Enemy' },
  ];
  return {
    name: 'radio',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable', 'external', 'provides')}
      type Query {
        queue: [QueueItem!]! @provides(fields: "... on Song { title } ... on Podcast { title }")
        onAir: Playable @provides(fields: "... on Song { title } ... on Podcast { title }")
        history: [Playable!]!
      }
      union QueueItem = Song | Podcast
      interface Playable { id: ID! title: String! }
      type Song implements Playable @key(fields: "id") { id: ID! title: String! @external plays: Int! }
      type Podcast implements Playable @key(fields: "id") { id: ID! title: String! @external plays: Int! }
    `,
    resolvers: {
      Query: {
        queue: () => queue,
        onAir: () => queue[0],
        history: () => [
          { __typename: 'Podcast', id: 'pc1' },
          { __typename: 'Song', id: 's2' },
        ],
      },
      QueueItem: { __resolveType: (item: { __typename: string }) => item.__typename },
      Playable: { __resolveType: (item: { __typename: string }) => item.__typename },
      Song: { __resolveReference: (ref: { id: string }) => ref, plays: (song: { id: string }) => (song.id === 's1' ? 120 : 45) },
      Podcast: { __resolveReference: (ref: { id: string }) => ref, plays: () => 7 },
    },
  };
}

export function musicGraph(): SubgraphOptions[] {
  return [artistsSubgraph(), catalogSubgraph(), radioSubgraph()];
}
