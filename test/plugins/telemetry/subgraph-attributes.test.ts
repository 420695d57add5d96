import { describe, expect, it } from 'vitest';
import { SubgraphAttributeCache } from '../../../plugins/telemetry/subgraph-attributes.js';
import type { GraphInfo, SubgraphConfig } from '../../../src/index.js';

function graphWith(...subgraphs: Array<Omit<SubgraphConfig, 'record'>>): GraphInfo {
  return { subgraphs: new Map(subgraphs.map((s) => [s.name, { ...s, record: {} } as unknown as SubgraphConfig])) } as unknown as GraphInfo;
}

const FETCH = { subgraph: 'products', kind: 'entity', operationType: 'query' };

describe('subgraph call attributes', () => {
  it('describe where a call goes, without the credentials of the routing URL', () => {
    const cache = new SubgraphAttributeCache(() => graphWith({ name: 'products', kind: 'graphql', url: 'https://bot:secret@products.internal/graphql' }));
    expect(cache.fetchSpan(FETCH).attributes(undefined)).toEqual({
      'server.address': 'products.internal',
      'server.port': 443,
      'http.request.method': 'POST',
      'url.full': 'https://products.internal/graphql',
      'switchyard.subgraph.name': 'products',
      'switchyard.fetch.kind': 'entity',
      'graphql.operation.type': 'query',
    });
    // The duration metric has one series per subgraph: no URL; a failure adds its error type.
    expect(cache.metric('products', undefined)).toEqual({
      'switchyard.subgraph.name': 'products',
      'server.address': 'products.internal',
      'server.port': 443,
      'http.request.method': 'POST',
    });
    expect(cache.metric('products', 'SUBGRAPH_UNREACHABLE')).toMatchObject({ 'switchyard.subgraph.name': 'products', 'error.type': 'SUBGRAPH_UNREACHABLE' });
    expect(cache.metric('products', undefined)).not.toHaveProperty('error.type');
  });

  it('follow a graph reload that moves a subgraph', () => {
    let graph = graphWith({ name: 'products', kind: 'graphql', url: 'http://10.0.0.1:4001/graphql' });
    const cache = new SubgraphAttributeCache(() => graph);
    expect(cache.fetchSpan(FETCH).attributes(undefined)['url.full']).toBe('http://10.0.0.1:4001/graphql');
    graph = graphWith({ name: 'products', kind: 'graphql', url: 'http://10.0.0.2:4002/graphql' });
    expect(cache.fetchSpan(FETCH).attributes(undefined)).toMatchObject({ 'url.full': 'http://10.0.0.2:4002/graphql', 'server.address': '10.0.0.2', 'server.port': 4002 });
    expect(cache.metric('products', undefined)).toMatchObject({ 'server.address': '10.0.0.2', 'server.port': 4002 });
  });

  it('tell root and entity calls apart, and name a subgraph the graph does not know', () => {
    const cache = new SubgraphAttributeCache(() => graphWith({ name: 'catalog', kind: 'grpc', url: 'dns:///catalog:50051' }));
    expect(cache.fetchSpan({ subgraph: 'catalog', kind: 'root', operationType: 'query' }).attributes(undefined)).toMatchObject({
      'rpc.system': 'grpc',
      'server.address': 'catalog',
      'server.port': 50051,
      'switchyard.fetch.kind': 'root',
    });
    expect(cache.fetchSpan({ subgraph: 'catalog', kind: 'entity', operationType: 'query' }).attributes(3)).toMatchObject({ 'switchyard.fetch.kind': 'entity' });
    expect(cache.fetchSpan({ subgraph: 'gone', kind: 'root', operationType: 'mutation' }).name).toBe('fetch gone');
    expect(cache.fetchSpan({ subgraph: 'gone', kind: 'root', operationType: 'mutation' }).attributes(undefined)).toEqual({
      'switchyard.subgraph.name': 'gone',
      'switchyard.fetch.kind': 'root',
      'graphql.operation.type': 'mutation',
    });
    expect(cache.metric('gone', undefined)).toEqual({ 'switchyard.subgraph.name': 'gone' });
  });

  it('share one frozen set per shape and entity count, so that spans copy only what they change', () => {
    const graph = graphWith({ name: 'products', kind: 'graphql', url: 'http://products:4001/graphql' });
    const cache = new SubgraphAttributeCache(() => graph);
    const shape = cache.fetchSpan(FETCH);
    expect(cache.fetchSpan(FETCH)).toBe(shape);
    expect(shape.name).toBe('fetch products');
    expect(shape.attributes(2)).toBe(shape.attributes(2));
    expect(shape.attributes(2)).toMatchObject({ 'switchyard.fetch.entities': 2, 'switchyard.subgraph.name': 'products' });
    expect(shape.attributes(3)['switchyard.fetch.entities']).toBe(3);
    expect(shape.attributes(undefined)).not.toHaveProperty('switchyard.fetch.entities');
    expect(Object.isFrozen(shape.attributes(2))).toBe(true);
    // Past the cached counts: a fresh object each time, with the same content.
    expect(shape.attributes(10_000)).not.toBe(shape.attributes(10_000));
    expect(shape.attributes(10_000)['switchyard.fetch.entities']).toBe(10_000);
  });
});
