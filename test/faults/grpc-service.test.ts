import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { catalogService, inventorySubgraph } from '../plugins/grpc/catalog-fixture.js';
import { startGraph, type TestGraph } from '../plugins/grpc/grpc-graph.js';
import { eventually, problems, sleep, startLoad } from './load-loop.js';
import { startTcpSwitch, type TcpSwitch } from './tcp-switch.js';

vi.setConfig({ testTimeout: 30_000 });

let graph: TestGraph;
let service: TcpSwitch;
let servicePort = 0;

beforeAll(async () => {
  service = await startTcpSwitch(() => servicePort);
  graph = await startGraph({
    grpc: [catalogService()],
    http: [inventorySubgraph],
    // Clients reach the catalog service through the switch, so the test can take it down and bring it back on the same address.
    mapRecords: (records) =>
      records.map((record) => {
        if (record.kind !== 'grpc') return record;
        servicePort = Number(/:(\d+)$/.exec(record.url)?.[1]);
        return { ...record, url: `dns:///127.0.0.1:${service.port}` };
      }),
  });
});

afterAll(async () => {
  await graph?.close();
  await service?.close();
});

const QUERY = '{ warehouse { id inStock } product(id: "p1") { name } }';
const WAREHOUSE = [
  { id: 'p1', inStock: true },
  { id: 'p2', inStock: true },
  { id: 'p3', inStock: false },
];
const HEALTHY = JSON.stringify({ data: { warehouse: WAREHOUSE, product: { name: 'Table' } } });

/** Healthy, or the documented partial answer while the service is down; anything else is a problem. */
async function send(): Promise<string | undefined> {
  const response = await graph.query(QUERY);
  const body = JSON.stringify(response.body);
  if (response.status === 200 && body === HEALTHY) return undefined;
  const error = response.body.errors?.[0];
  const partial =
    response.status === 200 &&
    JSON.stringify(response.body.data) === JSON.stringify({ warehouse: WAREHOUSE, product: null }) &&
    response.body.errors?.length === 1 &&
    error?.extensions?.code === 'SUBGRAPH_REQUEST_FAILED' &&
    JSON.stringify(error.extensions.grpc) === JSON.stringify({ code: 14, status: 'UNAVAILABLE', method: 'QueryProduct' }) &&
    JSON.stringify(error.path) === '["product"]';
  return partial ? 'partial' : `${response.status} ${body.slice(0, 300)}`;
}

describe('a gRPC service that dies under load', () => {
  it('answers the other subgraphs with UNAVAILABLE at the gRPC fields while it is down, then recovers by itself when it is back', async () => {
    expect(await send()).toBeUndefined();
    const load = startLoad(send);
    await sleep(300);
    // Taken before the service goes: requests sent while it shuts down may already answer partially.
    const downAt = Date.now();
    await service.down();
    await sleep(2000);
    await service.up();
    await eventually(async () => (await send()) === undefined, 'answers from the restarted service', 5_000);
    const recoveredAt = Date.now();
    await sleep(300);
    const samples = await load.stop();

    // The only non-healthy answers are the documented partial ones, and only around the outage.
    expect(problems(samples).filter((problem) => problem !== 'partial')).toEqual([]);
    const partial = samples.filter((sample) => sample.problem === 'partial');
    expect(partial.length).toBeGreaterThan(10);
    for (const sample of partial) expect(sample.at).toBeGreaterThanOrEqual(downAt - 50);
    // Calls fail fast while nothing listens: no request waits for the dead service.
    expect(Math.max(...partial.map((sample) => sample.ms))).toBeLessThan(1000);
    expect(samples.filter((sample) => sample.at > recoveredAt + 100).every((sample) => sample.ok)).toBe(true);
  });
});
