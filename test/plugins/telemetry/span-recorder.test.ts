import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ROOT_CONTEXT, SpanKind, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ParentBasedSampler, type ReadableSpan, type SpanProcessor, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { SpanRecorder, writeTraceContext } from '../../../plugins/telemetry/span-recorder.js';

/** A recorder whose spans keep strings of at most `limit` code units (16 by default: short enough to see cuts). */
function recorderWith(rate: number, limit = 16): { recorder: SpanRecorder; ended: ReadableSpan[] } {
  const ended: ReadableSpan[] = [];
  const collect: SpanProcessor = { onStart() {}, onEnd: (span) => void ended.push(span), forceFlush: async () => {}, shutdown: async () => {} };
  const recorder = new SpanRecorder(
    resourceFromAttributes({ 'service.name': 'unit' }),
    { name: 'switchyard' },
    limit,
    new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(rate) }),
    [collect],
  );
  return { recorder, ended };
}

/** The context a client's `traceparent` gives (what the plugin extracts from request headers). */
function clientContext(traceparent: string, tracestate?: string) {
  const headers: Record<string, string> = { traceparent, ...(tracestate ? { tracestate } : {}) };
  return new W3CTraceContextPropagator().extract(ROOT_CONTEXT, headers, { keys: (c) => Object.keys(c), get: (c, k) => c[k] });
}

describe('span recorder', () => {
  it('records a sampled trace as spans the exporters read: ids, parents, times, attributes cut at the limit', () => {
    const { recorder, ended } = recorderWith(1);
    const root = recorder.startRoot('query', SpanKind.SERVER, 1_000.5, ROOT_CONTEXT, () => ({ 'graphql.document': 'x'.repeat(40) })).recorded!;
    const child = root.child('fetch a', SpanKind.CLIENT, 1_001, { 'switchyard.subgraph.name': 'a' });
    child.setAttribute('long', 'y'.repeat(20));
    child.end(1_003.25);
    root.end(1_004);
    expect(ended.map((s) => s.name)).toEqual(['fetch a', 'query']);
    const [fetch, operation] = ended as [ReadableSpan, ReadableSpan];
    expect(fetch.spanContext().traceId).toBe(operation.spanContext().traceId);
    expect(fetch.parentSpanContext?.spanId).toBe(operation.spanContext().spanId);
    expect(operation.parentSpanContext).toBeUndefined();
    expect(fetch.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
    expect(fetch.startTime).toEqual([1, 1_000_000]);
    expect(fetch.endTime).toEqual([1, 3_250_000]);
    expect(fetch.duration).toEqual([0, 2_250_000]);
    expect(fetch.attributes).toEqual({ 'switchyard.subgraph.name': 'a', long: 'y'.repeat(16) });
    expect(operation.attributes['graphql.document']).toBe('x'.repeat(16));
    expect(operation.resource.attributes['service.name']).toBe('unit');
    expect(operation.instrumentationScope.name).toBe('switchyard');
    // A span ends once.
    root.end(2_000);
    expect(ended).toHaveLength(2);
  });

  it('lets spans share an attribute set until one of them writes its own', () => {
    const { recorder, ended } = recorderWith(1);
    const root = recorder.startRoot('query', SpanKind.SERVER, 1, ROOT_CONTEXT, () => ({})).recorded!;
    const shared = Object.freeze({ 'switchyard.subgraph.name': 'a', 'switchyard.fetch.entities': 2 });
    const first = root.child('fetch a', SpanKind.CLIENT, 2, shared);
    const second = root.child('fetch a', SpanKind.CLIENT, 2, shared);
    second.setAttribute('switchyard.response_cache.status', 'hit');
    second.setStatus({ code: 2, message: 'boom' });
    first.end(3);
    second.end(3);
    const [one, two] = ended as [ReadableSpan, ReadableSpan];
    expect(one.attributes).toEqual({ 'switchyard.subgraph.name': 'a', 'switchyard.fetch.entities': 2 });
    expect(two.attributes).toEqual({ 'switchyard.subgraph.name': 'a', 'switchyard.fetch.entities': 2, 'switchyard.response_cache.status': 'hit' });
    expect(shared).not.toHaveProperty('switchyard.response_cache.status');
    expect(one.status.code).toBe(0);
    // Each span has its own id; both name the operation span as their parent.
    expect(one.spanContext().spanId).not.toBe(two.spanContext().spanId);
    expect([one.parentSpanContext?.spanId, two.parentSpanContext?.spanId]).toEqual([root.spanContext().spanId, root.spanContext().spanId]);
    // A span without attributes of its own starts with none.
    const parse = root.child('parse', SpanKind.INTERNAL, 2);
    parse.setAttribute('x', 1);
    expect(root.child('validate', SpanKind.INTERNAL, 2).attributes).toEqual({});
  });

  it('measures a duration across a second boundary', () => {
    const { recorder } = recorderWith(1);
    const span = recorder.startRoot('op', SpanKind.SERVER, 999.5, ROOT_CONTEXT, () => ({})).recorded!;
    expect(span.duration).toEqual([0, 0]);
    span.end(1_000.5);
    expect(span.duration).toEqual([0, 1_000_000]);
  });

  it('records exceptions as the OpenTelemetry conventions write them', () => {
    const { recorder, ended } = recorderWith(1, 1024);
    const span = recorder.startRoot('op', SpanKind.SERVER, 1, ROOT_CONTEXT, () => ({})).recorded!;
    const error = Object.assign(new Error('subgraph down'), { code: 'SUBGRAPH_REQUEST_FAILED' });
    span.recordException(error);
    span.end(2);
    const event = ended[0]!.events[0]!;
    expect(event.name).toBe('exception');
    expect(event.attributes).toMatchObject({ 'exception.type': 'SUBGRAPH_REQUEST_FAILED', 'exception.message': 'subgraph down' });
    expect(String(event.attributes?.['exception.stacktrace'])).toContain('subgraph down');
  });

  it('follows the client: a sampled parent is recorded at rate 0, an unsampled one is forwarded with the flag off', () => {
    const { recorder } = recorderWith(0);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const sampled = recorder.startRoot('op', SpanKind.SERVER, 1, clientContext(`00-${traceId}-00f067aa0ba902b7-01`, 'vendor=abc'), () => ({}));
    expect(sampled.recorded?.spanContext().traceId).toBe(traceId);
    expect(sampled.recorded?.parentSpanContext).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });

    const unsampled = recorder.startRoot('op', SpanKind.SERVER, 1, clientContext(`00-${traceId}-00f067aa0ba902b7-00`, 'vendor=abc'), () => ({}));
    expect(unsampled.recorded).toBeUndefined();
    const headers: Record<string, string> = {};
    writeTraceContext(unsampled.forward!, headers);
    expect(headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(headers.traceparent).not.toContain('00f067aa0ba902b7');
    expect(headers.tracestate).toBe('vendor=abc');

    // No client trace and not sampled: nothing recorded, nothing to forward.
    expect(recorder.startRoot('op', SpanKind.SERVER, 1, ROOT_CONTEXT, () => ({}))).toEqual({ forward: undefined });
  });
});

describe('span recorder: cut strings', () => {
  it('never cuts through a surrogate pair, in names, attributes, events and status messages', () => {
    const { recorder, ended } = recorderWith(1);
    // 15 characters, then an emoji (two UTF-16 code units) across the limit of 16.
    const long = `${'x'.repeat(15)}\u{1F600}tail`;
    const span = recorder.startRoot(long, SpanKind.SERVER, 1, ROOT_CONTEXT, () => ({ 'user_agent.original': long })).recorded!;
    span.setAttribute('graphql.operation.name', long);
    span.addEvent('persisted_operation.lookup', { 'switchyard.persisted_operation.id': long });
    span.recordException({ name: 'GraphQLError', message: long });
    span.setStatus({ code: 2, message: long });
    const child = span.child(long, SpanKind.INTERNAL, 1);
    child.updateName(`${long}!`);
    child.end(2);
    span.end(2);
    const cut = 'x'.repeat(15);
    const [inner, operation] = ended as [ReadableSpan, ReadableSpan];
    expect([operation.name, inner.name]).toEqual([cut, cut]);
    expect(operation.attributes).toEqual({ 'user_agent.original': cut, 'graphql.operation.name': cut });
    expect(operation.events.map((e) => e.attributes)).toEqual([{ 'switchyard.persisted_operation.id': cut }, { 'exception.type': 'GraphQLError', 'exception.message': cut }]);
    expect(operation.status).toEqual({ code: 2, message: cut });
    // A pair that fits whole is kept whole.
    const fits = recorder.startRoot(`${'x'.repeat(14)}\u{1F600}tail`, SpanKind.SERVER, 1, ROOT_CONTEXT, () => ({})).recorded!;
    expect(fits.name).toBe(`${'x'.repeat(14)}\u{1F600}`);
  });

  it('keeps only the cut part of a long value alive, not the whole string it was cut from', () => {
    // `global.gc` is not exposed under vitest: turn the flag on now and take `gc` from a new context, where it appears.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { recorder, ended } = recorderWith(1);
    const MB = 1_000_000; // under Node's threshold for external strings: on the V8 heap, counted in heapUsed
    const COUNT = 48;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < COUNT; i++) {
      // A distinct 1 MB string per span (a request body's operation name, document, error message).
      const value = () => Buffer.alloc(MB, String.fromCharCode(97 + (i % 26))).toString('latin1');
      const span = recorder.startRoot(value(), SpanKind.SERVER, 1, ROOT_CONTEXT, () => ({ 'user_agent.original': value() })).recorded!;
      span.updateName(value());
      span.setAttribute('graphql.document', value());
      span.addEvent('exception', { 'exception.message': value() });
      span.setStatus({ code: 2, message: value() });
      span.end(2);
    }
    gc();
    const retained = process.memoryUsage().heapUsed - before;
    // The processor holds every span (as an export queue does): 48 spans keep 5 cut values of 16 units each,
    // against 240 MB if a cut kept its parent alive.
    expect(ended).toHaveLength(COUNT);
    expect(retained).toBeLessThan(8 * MB);
  });
});
