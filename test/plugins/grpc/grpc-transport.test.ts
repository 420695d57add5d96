import { afterEach, describe, expect, it } from 'vitest';
import { useGrpc } from '../../../plugins/grpc/index.js';
import { ConfigError, definePlugin, z, type SubgraphRequest } from '../../../src/index.js';
import { catalogService, inventorySubgraph } from './catalog-fixture.js';
import { startGraph, type TestGraph } from './grpc-graph.js';

let graph: TestGraph | undefined;

afterEach(async () => {
  await graph?.close();
  graph = undefined;
});

describe('gRPC connections', () => {
  it('reuses one connection for every request to the service', async () => {
    graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph] });
    for (let i = 0; i < 5; i++) {
      const response = await graph.query(`{ product(id: "p1") { name } warehouse { name } }`);
      expect(response.body.errors).toBeUndefined();
    }
    // Distinct texts, so single flight does not fold them into one call.
    await Promise.all(Array.from({ length: 10 }, (_, i) => graph!.query(`{ time${i}: serverTime }`)));
    expect(graph.grpc.catalog!.calls.length).toBeGreaterThanOrEqual(20);
    expect(graph.grpc.catalog!.connections()).toBe(1);
  });

  it('sends the headers the propagation rules pass on as gRPC metadata', async () => {
    graph = await startGraph({
      grpc: [catalogService()],
      http: [inventorySubgraph],
      config: {
        headers: {
          all: {
            request: [
              { op: 'propagate', named: 'x-tenant' },
              { op: 'set', name: 'x-router', value: 'switchyard' },
            ],
          },
        },
      },
    });
    await graph.query(`{ serverTime }`, undefined, { 'x-tenant': 'acme', 'x-other': 'no' });
    const metadata = graph.grpc.catalog!.calls.at(-1)!.metadata;
    expect(metadata).toMatchObject({ 'x-tenant': 'acme', 'x-router': 'switchyard' });
    expect(metadata).not.toHaveProperty('x-other');
  });
});

describe('merged entity fetches', () => {
  it('serves the aliased _entities fields of a batched request, each from its lookup', async () => {
    const fetches: SubgraphRequest[] = [];
    const recorder = definePlugin({ name: 'fetch-recorder', options: z.strictObject({}), setup: () => ({ hooks: { onFetch: (event) => void fetches.push(event.input) } }) });
    graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph], config: { engine: { enable_multi_fetch: true } }, plugins: [recorder()] });
    const response = await graph.query(`{ warehouse { name } featured { kind } }`);
    const catalogFetches = fetches.filter((fetch) => fetch.subgraph === 'catalog');
    expect(catalogFetches.map((fetch) => fetch.parts?.length)).toEqual([2]);
    expect(catalogFetches[0]!.query).toMatch(/_0: _entities\(representations: \$r0\).*_1: _entities\(representations: \$r1\)/);
    expect(response.body).toEqual({
      data: { warehouse: [{ name: 'Table' }, { name: 'Manual' }, { name: 'Lamp' }], featured: [{ kind: 'PHYSICAL' }] },
    });
    expect(graph.grpc.catalog!.calls.map((call) => call.request)).toEqual(expect.arrayContaining([{ keys: [{ id: 'p1' }, { id: 'p2' }, { id: 'p3' }] }, { keys: [{ id: 'p3' }] }]));
  });
});

describe('useGrpc options', () => {
  it('refuses options it does not know, naming the plugin', () => {
    let error: unknown;
    try {
      useGrpc({ timeout: '1s' } as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('Invalid configuration:\n  [grpc] unknown key "timeout"');
  });
});
