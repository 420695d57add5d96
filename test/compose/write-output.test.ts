import { describe, expect, it } from 'vitest';
import { outputFormatOf, renderOutput, type ComposedGraph } from '../../src/compose/index.js';
import { parseGraphSource } from '../../src/kernel/graph/execution-config.js';
import { ACCOUNTS_URL, REVIEWS_URL, accountsAndReviewsSupergraph } from './fixtures.js';

const graph: ComposedGraph = {
  supergraphSdl: accountsAndReviewsSupergraph(),
  subgraphs: [
    { kind: 'graphql', name: 'accounts', url: ACCOUNTS_URL },
    { kind: 'graphql', name: 'reviews', url: REVIEWS_URL },
  ],
};

describe('outputFormatOf', () => {
  it('picks the execution config for .json and the supergraph SDL for .graphql, .graphqls and .gql', () => {
    expect(outputFormatOf('out/router.execution.config.json')).toBe('execution-config');
    expect(outputFormatOf('supergraph.graphql')).toBe('supergraph-sdl');
    expect(outputFormatOf('SUPERGRAPH.GRAPHQLS')).toBe('supergraph-sdl');
    expect(outputFormatOf('supergraph.gql')).toBe('supergraph-sdl');
    expect(outputFormatOf('supergraph.yaml')).toBeUndefined();
    expect(outputFormatOf('supergraph')).toBeUndefined();
  });
});

describe('renderOutput', () => {
  it('writes a version 1 execution config with the supergraph, the subgraphs and the composition time', () => {
    const text = renderOutput(graph, 'execution-config', { composedAt: new Date('2025-03-04T05:06:07Z') });
    expect(JSON.parse(text)).toEqual({
      version: 1,
      supergraph: graph.supergraphSdl,
      subgraphs: graph.subgraphs,
      compose: { composedAt: '2025-03-04T05:06:07.000Z' },
    });
    expect(text.endsWith('}\n')).toBe(true);
  });

  it('writes output the router reads back in both formats', () => {
    const fromJson = parseGraphSource(renderOutput(graph, 'execution-config'), 'out.json');
    const fromSdl = parseGraphSource(renderOutput(graph, 'supergraph-sdl'), 'out.graphql');
    expect(fromJson.subgraphs).toEqual(graph.subgraphs);
    expect(fromSdl.subgraphs).toEqual(graph.subgraphs);
  });
});
