/**
 * A traced subscription: one SERVER span for the subscription request, with
 * its parse, validate, plan and execute children; its events are not traced
 * (docs/telemetry.md), so nothing is recorded once that span has ended,
 * neither for an event's entity fetches nor when a graph reload plans the
 * running subscription again. Real subgraphs (reviews streams over
 * graphql-ws, products answers entities over HTTP), a real OTLP receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { useTelemetry } from '../../../plugins/telemetry/index.js';
import { collect, setupSubscriptions, wsClient } from '../../subscriptions/fixtures.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver.close();
});

describe('telemetry: subscriptions', () => {
  it('records the subscription request once; events and a reload re-plan add no spans, and event fetches carry the trace unsampled', async () => {
    const setup = await setupSubscriptions({
      plugins: [useTelemetry({ service_name: 'router-under-test', tracing: { enabled: true, exporters: [{ endpoint: receiver.endpoint, batch_timeout: '20ms' }] } })],
    });
    const client = wsClient(setup);
    const stream = collect(client, { query: 'subscription Added { reviewAdded { id product { name } } }' });
    await stream.until(() => setup.reviews.open() === 1);
    const spans = await receiver.waitForSpans((all) => all.some((s) => s.name === 'subscription Added'));
    const root = spans.find((s) => s.name === 'subscription Added')!;
    const ofTrace = () => receiver.spans.filter((s) => s.traceId === root.traceId);
    await receiver.waitForSpans(() => ofTrace().length >= 5);
    expect(
      ofTrace()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['execute', 'parse', 'plan', 'subscription Added', 'validate']);

    for (let n = 1; n <= 3; n++) setup.reviews.push({ id: `r${n}`, body: 'Fine', upc: 'p1' });
    await stream.until(() => stream.events.length === 3);
    const { reviews, products } = setup;
    const composed = composeSubgraphs([
      { name: reviews.name, url: reviews.url, sdl: reviews.typeDefs },
      { name: products.name, url: products.url, sdl: products.typeDefs },
    ]);
    await setup.router.loadGraph({ supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' });
    for (let n = 4; n <= 6; n++) setup.reviews.push({ id: `r${n}`, body: 'Fine', upc: 'p1' });
    await stream.until(() => stream.events.length === 6);
    expect(products.calls.length).toBeGreaterThanOrEqual(6);
    // The events' fetches still name the subscription's trace, not sampled, so the subgraph records nothing into it either.
    for (const call of products.calls) expect(call.headers.traceparent).toBe(`00-${root.traceId}-${root.spanId}-00`);
    // Anything recorded late would be exported within a few batch timeouts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      ofTrace()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['execute', 'parse', 'plan', 'subscription Added', 'validate']);
  });
});
