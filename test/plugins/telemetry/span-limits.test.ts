/**
 * Client input is cut before it is kept on a span (16 KiB, the recorder's
 * limit): a client sending huge names, field names or persisted ids must not
 * make the router hold and export spans of that size. Checked on what a real
 * OTLP receiver got.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useTelemetry } from '../../../plugins/telemetry/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { useTelemetrySubgraphs } from './use-subgraphs.js';

/** The span recorder's limit (start-telemetry.ts). */
const LIMIT = 16 * 1024;
/** Comfortably over the limit. */
const HUGE = 60_000;
const SERVER = 2;

let subgraphs: TestSubgraph[] = [];
useTelemetrySubgraphs(({ products, reviews, users }) => {
  subgraphs = [products, reviews, users];
});
let receiver: OtlpReceiver;
let router: TestRouter;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  router = await startTestRouter({
    subgraphs,
    plugins: [useTelemetry({ tracing: { enabled: true, sampling_rate: 1, exporters: [{ endpoint: receiver.endpoint, batch_timeout: '10ms' }] } })],
  });
});
afterAll(async () => {
  await router?.close();
  await receiver?.close();
});
beforeEach(() => receiver.reset());

/** Sends `request` in a trace of its own and returns the trace's spans once the operation span arrived. */
async function traced(request: Parameters<TestRouter['query']>[0] & object): Promise<ReceivedSpan[]> {
  const traceId = randomBytes(16).toString('hex');
  await router.query({ ...request, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
  // The operation span ends last: its children were exported with it or before.
  const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === traceId && s.kind === SERVER));
  return spans.filter((s) => s.traceId === traceId);
}

function span(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.find((s) => s.name === name);
  expect(found, `a ${name} span in ${spans.map((s) => s.name.slice(0, 40)).join(', ')}`).toBeDefined();
  return found!;
}

describe('telemetry: client input on spans is cut at the length limit', () => {
  it('cuts a span name made from a huge operation name', async () => {
    const name = `Op${'N'.repeat(HUGE)}`;
    const spans = await traced({ query: `query ${name} { topProducts { upc } }`, operationName: name });
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.name).toBe(`query ${name}`.slice(0, LIMIT));
    expect(String(server.attributes['graphql.operation.name'])).toHaveLength(LIMIT);
  });

  it('cuts exception messages, stack traces and status messages quoting a huge field name or token', async () => {
    // A validation error quotes the field: the validate span's exception event and status.
    const field = `f${'x'.repeat(HUGE)}`;
    const validate = span(await traced({ query: `{ ${field} }` }), 'validate');
    const exception = validate.events.find((e) => e.name === 'exception')!;
    expect(String(exception.attributes['exception.message'])).toHaveLength(LIMIT);
    expect(validate.status.message).toHaveLength(LIMIT);

    // A syntax error quotes the token, and its stack trace repeats the message: the parse span.
    const parse = span(await traced({ query: `{ "${'s'.repeat(HUGE)}" }` }), 'parse');
    const thrown = parse.events.find((e) => e.name === 'exception')!;
    expect(String(thrown.attributes['exception.message']).length).toBe(LIMIT);
    expect(String(thrown.attributes['exception.stacktrace']).length).toBeLessThanOrEqual(LIMIT);
    expect(parse.status.message).toHaveLength(LIMIT);
    for (const s of [validate, parse]) expect(s.name.length).toBeLessThan(100);
  });

  it('cuts a huge persisted operation id on the persisted_operation.lookup event to 256 characters', async () => {
    const spans = await traced({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(HUGE) } } });
    const lookup = spans.find((s) => s.kind === SERVER)!.events.find((e) => e.name === 'persisted_operation.lookup')!;
    const id = String(lookup.attributes['switchyard.persisted_operation.id']);
    expect(id).toBe(`${'a'.repeat(255)}\u2026`);
  });
});
