/**
 * While the router traces, it alone decides the W3C trace context subgraphs
 * get: a header rule that propagates every client header (`matching: .*`)
 * must not carry the client's `traceparent` or `tracestate` past it when the
 * router restarted the trace or has nothing to forward.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { useTelemetry } from '../../../plugins/telemetry/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { useTelemetrySubgraphs } from './use-subgraphs.js';

let products: TestSubgraph;
useTelemetrySubgraphs((started) => {
  products = started.products;
});
const routers: TestRouter[] = [];
let receiver: OtlpReceiver | undefined;
afterAll(async () => {
  await Promise.all(routers.map((router) => router.close()));
  await receiver?.close();
});
beforeEach(() => products.reset());

/** A router tracing at `rate` whose header rule sends every client header on to subgraphs. */
async function propagatingRouter(rate: number): Promise<TestRouter> {
  receiver ??= await startOtlpReceiver();
  const router = await startTestRouter({
    subgraphs: [products],
    config: { headers: { all: { request: [{ op: 'propagate', matching: '.*' }] } } },
    plugins: [useTelemetry({ tracing: { enabled: true, sampling_rate: rate, exporters: [{ endpoint: receiver.endpoint, batch_timeout: '50ms' }] } })],
  });
  routers.push(router);
  return router;
}

/** The trace context headers the subgraph got for one request sending `headers`. */
async function sentOn(router: TestRouter, headers: Record<string, string>): Promise<{ traceparent?: string; tracestate?: string }> {
  products.reset();
  const response = await router.query({ query: '{ topProducts { upc } }', headers: { ...headers, 'x-other': 'kept' } });
  expect(response.status).toBe(200);
  const got = products.calls[0]!.headers;
  // The rule itself works: other client headers still reach the subgraph.
  expect(got['x-other']).toBe('kept');
  return { traceparent: got.traceparent, tracestate: got.tracestate };
}

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
/** Client trace contexts the router cannot continue (W3C: a version 00 header has exactly four fields; an all-zero trace id is invalid). */
const INVALID = [`00-${TRACE}-${PARENT}-01-extra`, `00-00000000000000000000000000000000-${PARENT}-01`];
const NEW_SAMPLED = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;

describe('telemetry: trace context to subgraphs under a propagate-all header rule', () => {
  it('sampling 1: a restarted trace goes on with the router traceparent and without the client tracestate', async () => {
    const router = await propagatingRouter(1);
    for (const traceparent of INVALID) {
      const sent = await sentOn(router, { traceparent, tracestate: 'vendor=opaque' });
      expect(sent.traceparent).toMatch(NEW_SAMPLED);
      expect(sent.traceparent).not.toContain(TRACE);
      expect(sent.tracestate).toBeUndefined();
    }
    const onlyState = await sentOn(router, { tracestate: 'vendor=opaque' });
    expect(onlyState.traceparent).toMatch(NEW_SAMPLED);
    expect(onlyState.tracestate).toBeUndefined();
    // A valid client trace is continued, its tracestate with it.
    const valid = await sentOn(router, { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'vendor=opaque' });
    expect(valid.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(valid.traceparent).not.toContain(PARENT);
    expect(valid.tracestate).toBe('vendor=opaque');
  });

  it('sampling 0: an invalid client trace context is not sent on; a valid unsampled one goes on under a new span id', async () => {
    const router = await propagatingRouter(0);
    for (const traceparent of INVALID) expect(await sentOn(router, { traceparent, tracestate: 'vendor=opaque' })).toEqual({});
    expect(await sentOn(router, { tracestate: 'vendor=opaque' })).toEqual({});
    const valid = await sentOn(router, { traceparent: `00-${TRACE}-${PARENT}-00`, tracestate: 'vendor=opaque' });
    expect(valid.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    expect(valid.traceparent).not.toContain(PARENT);
    expect(valid.tracestate).toBe('vendor=opaque');
  });
});
