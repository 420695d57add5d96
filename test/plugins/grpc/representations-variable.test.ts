/**
 * A gRPC subgraph reads an entity call's representations from the variable
 * the `_entities` field names, so a client's own `$representations` (sent to
 * a field argument) keeps its value there too.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { catalogService, inventorySubgraph } from './catalog-fixture.js';
import { startGraph, type TestGraph } from './grpc-graph.js';

let graph: TestGraph;

beforeAll(async () => {
  graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph] });
});

afterAll(async () => {
  await graph?.close();
});

it('looks entities up by the renamed representations variable and passes the client’s $representations to the field', async () => {
  const named = await graph.query('query ($limit: Int!) { warehouse { name reviews(limit: $limit) { rating } } }', { limit: 1 });
  expect(named.body.errors).toBeUndefined();
  expect(named.body.data?.warehouse).toHaveLength(3);
  const response = await graph.query('query ($representations: Int!) { warehouse { name reviews(limit: $representations) { rating } } }', { representations: 1 });
  expect(response.body).toEqual(named.body);
  const calls = graph.grpc.catalog!.calls;
  expect(calls.at(-1)!.request).toEqual({ context: [{ id: 'p1' }, { id: 'p2' }, { id: 'p3' }], field_args: { limit: 1 } });
});
