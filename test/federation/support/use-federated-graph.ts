import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { startFederatedGraph, type FederatedGraph, type FederatedGraphOptions } from './federated-graph.js';

/**
 * Starts the graph before the file's tests and stops it after; each test
 * starts with empty call records. Returns the graph through a getter.
 */
export function useFederatedGraph(definitions: () => readonly SubgraphOptions[], options?: FederatedGraphOptions): () => FederatedGraph {
  let graph: FederatedGraph | undefined;
  beforeAll(async () => {
    graph = await startFederatedGraph(definitions(), options);
  });
  beforeEach(() => {
    for (const subgraph of graph?.subgraphs.values() ?? []) subgraph.reset();
  });
  afterAll(async () => {
    await graph?.close();
  });
  return () => {
    if (!graph) throw new Error('the graph is not started (use it inside a test)');
    return graph;
  };
}
