/** Composes the benchmark subgraphs into a supergraph SDL that points at the running subgraph servers. */
import { composeSubgraphs } from '../../src/compose/index.js';
import { benchSubgraphs } from './subgraphs.js';

/** Supergraph SDL with each subgraph's routing URL from `urls` (by subgraph name). */
export function composeBenchSupergraph(urls: Readonly<Record<string, string>>): string {
  const composed = composeSubgraphs(
    benchSubgraphs.map((subgraph) => {
      const url = urls[subgraph.name];
      if (!url) throw new Error(`no URL for benchmark subgraph "${subgraph.name}"`);
      return { name: subgraph.name, url, sdl: subgraph.sdl };
    }),
    'the benchmark subgraphs',
  );
  return composed.supergraphSdl;
}
