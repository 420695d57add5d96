/**
 * The two composers users' supergraphs come from: Apollo's (what rover runs)
 * and The Guild's (Hive's, and what Switchyard composes with), each over one
 * subgraph, for tests of supergraphs written by other tools.
 */
import { composeServices as composeWithApollo } from '@apollo/composition';
import { composeServices as composeWithGuild } from '@theguild/federation-composition';
import { parse } from 'graphql';

export type Composer = (sdl: string, url: string) => { supergraphSdl?: string; errors?: readonly { message: string }[] };

export const COMPOSERS: [string, Composer][] = [
  ['@apollo/composition', (sdl, url) => composeWithApollo([{ name: 'a', url, typeDefs: parse(sdl) }])],
  ['@theguild/federation-composition', (sdl, url) => composeWithGuild([{ name: 'a', url, typeDefs: parse(sdl) }])],
];

/** The supergraph SDL `composer` writes for one subgraph `a` at `url`; throws when composition fails. */
export function composed(composer: Composer, sdl: string, url = 'http://127.0.0.1:1/graphql'): string {
  const result = composer(sdl, url);
  if (result.errors?.length || !result.supergraphSdl) throw new Error(`composition failed: ${result.errors?.map((e) => e.message).join('; ')}`);
  return result.supergraphSdl;
}
