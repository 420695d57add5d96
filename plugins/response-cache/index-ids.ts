import type { IndexSwitches } from './options.js';

/**
 * Ids of the invalidation indexes. Types and tags are indexed per
 * subgraph: no index spans subgraphs. The tag comes last so it may hold
 * any character.
 */
export const indexIds = {
  subgraph: (subgraph: string): string => `subgraph:${subgraph}`,
  type: (subgraph: string, type: string): string => `type:${subgraph}:${type}`,
  tag: (subgraph: string, tag: string): string => `tag:${subgraph}:${tag}`,
};

/**
 * The indexes an entry is listed under, as the switches allow. `type` is set
 * for entities only. An empty tag is not indexed: the endpoint refuses an
 * empty `cache_tag`, so such an index could never be invalidated.
 */
export function indexesOf(switches: IndexSwitches, subgraph: string, type: string | undefined, tags: readonly string[] | undefined): string[] {
  const ids: string[] = [];
  if (switches.subgraph) ids.push(indexIds.subgraph(subgraph));
  if (switches.type && type !== undefined) ids.push(indexIds.type(subgraph, type));
  if (switches.cache_tag && tags) for (const tag of new Set(tags)) if (tag !== '') ids.push(indexIds.tag(subgraph, tag));
  return ids;
}
