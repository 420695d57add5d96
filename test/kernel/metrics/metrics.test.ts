import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
let people: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  people = await startSubgraph(peopleSubgraph());
  router = await startTestRouter({
    subgraphs: [library, people],
    listen: true,
    config: { metrics: { enabled: true, listen_addr: '127.0.0.1:0', path: '/custom-metrics' } },
  });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([library?.close(), people?.close()]);
});

describe('Prometheus metrics', () => {
  it('counts operations by outcome and subgraph fetches by subgraph on their own listener', async () => {
    await router.query('{ book(id: "b1") { title author { name } } }');
    await router.query('{ failing }');
    const url = router.router.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/custom-metrics$/);
    const text = await (await fetch(url)).text();
    expect(text).toContain('switchyard_operations_total{outcome="ok"} 1');
    expect(text).toContain('switchyard_operations_total{outcome="partial"} 1');
    expect(text).toContain('switchyard_subgraph_fetches_total{subgraph="library",outcome="ok"} 1');
    expect(text).toContain('switchyard_subgraph_fetches_total{subgraph="people",outcome="ok"} 1');
    expect(text).toContain('switchyard_subgraph_fetch_duration_seconds_count{subgraph="people"} 1');
  });

  it('answers other paths with 404 and other methods with 405', async () => {
    const base = router.router.metricsUrl!.replace('/custom-metrics', '');
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    expect((await fetch(`${base}/custom-metrics`, { method: 'POST' })).status).toBe(405);
  });
});

describe('side listener exposure', () => {
  it('warns when a side listener binds beyond loopback', async () => {
    const { warnIfExposed } = await import('../../../src/index.js');
    const warnings: string[] = [];
    const log = { warn: (_fields: object, message: string) => void warnings.push(message) };
    warnIfExposed(log, 'The metrics listener', '127.0.0.1');
    warnIfExposed(log, 'The metrics listener', 'localhost');
    expect(warnings).toEqual([]);
    warnIfExposed(log, 'The metrics listener', '0.0.0.0');
    expect(warnings).toEqual(['The metrics listener listens beyond loopback over plain HTTP; put TLS or a firewall in front of it']);
  });
});
