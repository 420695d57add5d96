/**
 * Traces across the router's RPC edges: a gRPC subgraph (served by
 * @grpc/grpc-js, reached through the grpc plugin's transport) gets a CLIENT
 * span and the trace context in its call metadata; a Connect call to the
 * router (the connect plugin's listener) gets a SERVER span continuing the
 * caller's trace. A real OTLP/HTTP receiver on loopback decodes the spans.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTelemetry, type TelemetryOptions } from '../../../plugins/telemetry/index.js';
import { connectPost, serveProjects } from '../connect/fixtures.js';
import { catalogService, inventorySubgraph } from '../grpc/catalog-fixture.js';
import { startGraph } from '../grpc/grpc-graph.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const SERVER = 2;
const CLIENT = 3;

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver?.close();
});

function tracing(): TelemetryOptions {
  return { tracing: { enabled: true, exporters: [{ endpoint: receiver.endpoint, batch_timeout: '20ms' }] } };
}

function newIds(): { traceId: string; parentId: string } {
  return { traceId: randomBytes(16).toString('hex'), parentId: randomBytes(8).toString('hex') };
}

function inTrace(spans: readonly ReceivedSpan[], traceId: string): ReceivedSpan[] {
  return spans.filter((span) => span.traceId === traceId);
}

describe('telemetry across RPC edges', () => {
  it('gives a call to a gRPC subgraph a CLIENT span and sends it the trace context as metadata', async () => {
    const graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph], plugins: [useTelemetry(tracing())] });
    const { traceId, parentId } = newIds();
    try {
      const response = await graph.query('{ product(id: "p1") { id name } }', {}, { traceparent: `00-${traceId}-${parentId}-01` });
      expect(response.body).toEqual({ data: { product: { id: 'p1', name: 'Table' } } });
      const spans = inTrace(await receiver.waitForSpans((all) => inTrace(all, traceId).some((s) => s.kind === SERVER)), traceId);
      const fetch = spans.find((span) => span.name === 'fetch catalog')!;
      expect(fetch.kind).toBe(CLIENT);
      expect(fetch.attributes).toMatchObject({ 'rpc.system': 'grpc', 'switchyard.subgraph.name': 'catalog', 'server.address': '127.0.0.1' });
      expect(fetch.status.code).toBe(0);
      // Under the operation's execute span, itself under the operation span continuing the client's trace.
      const execute = spans.find((span) => span.spanId === fetch.parentSpanId)!;
      expect(execute.name).toBe('execute');
      expect(spans.find((span) => span.spanId === execute.parentSpanId)!.parentSpanId).toBe(parentId);
      // The service saw the fetch span as the parent of its work.
      const metadata = graph.grpc.catalog!.calls.at(-1)!.metadata;
      expect(metadata.traceparent).toBe(`00-${traceId}-${fetch.spanId}-01`);
    } finally {
      await graph.close();
    }
  });

  it('records a gRPC call that fails on its span', async () => {
    const graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph], plugins: [useTelemetry(tracing())] });
    const { traceId, parentId } = newIds();
    try {
      // setPrice of an unknown product answers NOT_FOUND.
      const response = await graph.query('mutation { setPrice(id: "nope", price: 1) { id } }', {}, { traceparent: `00-${traceId}-${parentId}-01` });
      expect(response.body.errors).toBeDefined();
      const spans = inTrace(await receiver.waitForSpans((all) => inTrace(all, traceId).some((s) => s.kind === SERVER)), traceId);
      const fetch = spans.find((span) => span.name === 'fetch catalog')!;
      expect(fetch.status.code).toBe(2);
      expect(fetch.attributes['rpc.system']).toBe('grpc');
    } finally {
      await graph.close();
    }
  });

  it('continues the caller trace in a SERVER span for a Connect call, with its subgraph calls under it', async () => {
    const served = await serveProjects({ router: { plugins: [useTelemetry(tracing())] } });
    const { traceId, parentId } = newIds();
    try {
      const answer = await connectPost(served.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', { first: 2 }, { traceparent: `00-${traceId}-${parentId}-01` });
      expect(answer.status).toBe(200);
      const spans = inTrace(await receiver.waitForSpans((all) => inTrace(all, traceId).some((s) => s.kind === SERVER)), traceId);
      const server = spans.find((span) => span.kind === SERVER)!;
      expect(server.name).toBe('query ListProjects');
      expect(server.parentSpanId).toBe(parentId);
      expect(server.attributes).toMatchObject({ 'rpc.system': 'connect_rpc', 'switchyard.origin': 'connect', 'graphql.operation.name': 'ListProjects' });
      const fetches = spans.filter((span) => span.kind === CLIENT);
      expect(fetches.length).toBeGreaterThan(0);
      const execute = spans.find((span) => span.name === 'execute')!;
      for (const fetch of fetches) expect(fetch.parentSpanId).toBe(execute.spanId);
    } finally {
      await served.close();
    }
  });
});
