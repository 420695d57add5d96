/**
 * Spans recorded straight into the shape the OpenTelemetry exporters read
 * (the SDK's `ReadableSpan`), without the SDK's tracer and `Span`.
 *
 * Why not the SDK's tracer: a traced request makes 11 spans, and under load
 * the SDK's per-span work (a sampler call and a context object per span,
 * input checks and copies of every attribute, span limits, time
 * conversions, a dozen fields per span) was about half of tracing's cost on
 * the router's thread. Here only the operation span asks the sampler; its
 * children are recorded exactly when it is; attributes are the ones this
 * plugin builds (valid by construction) and are taken as they are, shared
 * between spans until one writes its own; the resource and
 * instrumentation scope are shared by every span. What leaves
 * the router is unchanged: the SDK's `BatchSpanProcessor` queues the spans
 * and the OTLP exporter encodes them with @opentelemetry/otlp-transformer.
 */

import {
  type Attributes,
  type AttributeValue,
  type Context,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  SpanStatusCode,
  TraceFlags,
  type TraceState,
  trace,
} from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import { RandomIdGenerator, type ReadableSpan, type Sampler, SamplingDecision, type SpanProcessor, type TimedEvent } from '@opentelemetry/sdk-trace-base';
import { cutString } from '../../src/index.js';

const ids = new RandomIdGenerator();
const NO_LINKS: Link[] = [];
/** Shared by spans without events (replaced by the span's own array on its first event). */
const NO_EVENTS: TimedEvent[] = [];
const NOT_ENDED: HrTime = [0, 0];
/** Shared by spans without attributes of their own (replaced by the span's own object on its first write). */
const NO_ATTRIBUTES: Attributes = Object.freeze({});
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };

/** An attribute value with its strings (also those of an array) within `limit` (see `cutString`). */
function fitValue(value: AttributeValue, limit: number): AttributeValue {
  if (typeof value === 'string') return cutString(value, limit);
  if (Array.isArray(value) && value.some((item) => typeof item === 'string' && item.length > limit)) {
    return (value as unknown[]).map((item) => (typeof item === 'string' ? cutString(item, limit) : item)) as AttributeValue;
  }
  return value;
}

/** `attributes` itself when every value fits, else a copy with the long ones cut (the caller's object may be shared). */
function fitAttributes(attributes: Attributes, limit: number): Attributes {
  let out: Attributes | undefined;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    const fitted = fitValue(value, limit);
    if (fitted === value) continue;
    out ??= { ...attributes };
    out[key] = fitted;
  }
  return out ?? attributes;
}

/** Milliseconds since the epoch (fractional) as [seconds, nanoseconds]. */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}

/** Where recorded spans go, and what they share. */
export interface SpanSink {
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  /**
   * Longest string kept in a span, in UTF-16 code units: names, attribute and
   * event attribute values (exception messages and stack traces among them),
   * status messages. Longer ones are cut: they may carry client input (an
   * operation name, a field name quoted by a validation error).
   */
  readonly valueLengthLimit: number;
  ended(span: RecordedSpan): void;
}

/**
 * One span, written by the hooks and read by the exporters. A span lives
 * until its batch is exported (long enough to outlive the young
 * generation), so it holds as few objects as it can: it is its own span
 * context (`spanContext()` answers the span itself, and a child's
 * `parentSpanContext` is its parent span); it shares one frozen attribute
 * object with other spans until it writes one of its own (`attributes`
 * handed in at the start are shared too: they are copied on the first
 * write); it has no events array until an event is added and no duration
 * until an exporter asks for one.
 */
export class RecordedSpan implements ReadableSpan, SpanContext {
  ended = false;
  /** Within the sink's length limit: a name may come from the client's operation name. */
  name: string;
  status: SpanStatus = UNSET;
  events: TimedEvent[] = NO_EVENTS;
  readonly startTime: HrTime;
  endTime: HrTime = NOT_ENDED;
  constructor(
    private readonly sink: SpanSink,
    readonly traceId: string,
    readonly spanId: string,
    readonly traceFlags: number,
    readonly traceState: TraceState | undefined,
    readonly parentSpanContext: SpanContext | undefined,
    name: string,
    readonly kind: SpanKind,
    startMs: number,
    /** Never written in place while shared (see `ownsAttributes`). */
    public attributes: Attributes,
    /** Whether `attributes` is this span's own object (else it is shared and copied before a write). */
    private ownsAttributes: boolean,
  ) {
    this.name = cutString(name, sink.valueLengthLimit);
    this.startTime = hrTime(startMs);
  }

  get duration(): HrTime {
    if (!this.ended) return [0, 0];
    let seconds = this.endTime[0] - this.startTime[0];
    let nanos = this.endTime[1] - this.startTime[1];
    if (nanos < 0) {
      seconds -= 1;
      nanos += 1e9;
    }
    return seconds < 0 ? [0, 0] : [seconds, nanos];
  }

  get resource(): Resource {
    return this.sink.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.sink.instrumentationScope;
  }

  get links(): Link[] {
    return NO_LINKS;
  }

  get droppedAttributesCount(): number {
    return 0;
  }

  get droppedEventsCount(): number {
    return 0;
  }

  get droppedLinksCount(): number {
    return 0;
  }

  spanContext(): SpanContext {
    return this;
  }

  /**
   * A child of this span (same trace, recorded as this one is). `attributes`
   * may be a shared object (a cached set): the child copies it before it
   * writes an attribute of its own.
   */
  child(name: string, kind: SpanKind, startMs: number, attributes: Attributes = NO_ATTRIBUTES): RecordedSpan {
    return new RecordedSpan(this.sink, this.traceId, ids.generateSpanId(), this.traceFlags, this.traceState, this, name, kind, startMs, attributes, false);
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (!this.ownsAttributes) {
      this.attributes = { ...this.attributes };
      this.ownsAttributes = true;
    }
    this.attributes[key] = fitValue(value, this.sink.valueLengthLimit);
  }

  setAttributes(attributes: Attributes): void {
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) this.setAttribute(key, value);
    }
  }

  /** `attributes` is kept as it is unless a value must be cut (then a cut copy is kept). */
  addEvent(name: string, attributes: Attributes = NO_ATTRIBUTES, timeMs: number = performance.timeOrigin + performance.now()): void {
    if (this.events === NO_EVENTS) this.events = [];
    const limit = this.sink.valueLengthLimit;
    this.events.push({ name: cutString(name, limit), attributes: fitAttributes(attributes, limit), time: hrTime(timeMs), droppedAttributesCount: 0 });
  }

  /** An `exception` event as the OpenTelemetry conventions (and the SDK) write it (its fields cut by `addEvent`). */
  recordException(error: { name?: string; message?: string; stack?: string; code?: unknown }): void {
    const attributes: Attributes = {};
    const type = error.code ?? error.name;
    if (type !== undefined && type !== '') attributes['exception.type'] = String(type);
    if (error.message) attributes['exception.message'] = error.message;
    if (error.stack) attributes['exception.stacktrace'] = error.stack;
    this.addEvent('exception', attributes);
  }

  setStatus(status: SpanStatus): void {
    const message = status.message;
    const limit = this.sink.valueLengthLimit;
    this.status = message !== undefined && message.length > limit ? { code: status.code, message: cutString(message, limit) } : status;
  }

  updateName(name: string): void {
    this.name = cutString(name, this.sink.valueLengthLimit);
  }

  end(endMs: number): void {
    if (this.ended) return;
    this.ended = true;
    this.endTime = hrTime(endMs);
    this.sink.ended(this);
  }
}

/** The operation span's decision: a recorded span, or what to send subgraphs when it is not recorded. */
export type RootDecision = { readonly recorded: RecordedSpan; readonly forward?: undefined } | { readonly recorded?: undefined; readonly forward: SpanContext | undefined };

/**
 * Starts operation spans: asks the sampler once per trace (with the
 * client's context from `traceparent`, for the parent-based sampler).
 */
export class SpanRecorder implements SpanSink {
  constructor(
    readonly resource: Resource,
    readonly instrumentationScope: InstrumentationScope,
    readonly valueLengthLimit: number,
    private readonly sampler: Sampler,
    private readonly processors: readonly SpanProcessor[],
  ) {}

  /**
   * `parent`: the context extracted from the client's headers (ROOT_CONTEXT
   * without one); `attributes` are built only for a recorded span.
   */
  startRoot(name: string, kind: SpanKind, startMs: number, parent: Context, attributes: () => Attributes): RootDecision {
    const client = trace.getSpanContext(parent);
    const remote = client && trace.isSpanContextValid(client) ? client : undefined;
    const traceId = remote?.traceId ?? ids.generateTraceId();
    const decision = this.sampler.shouldSample(parent, traceId, name, kind, NO_ATTRIBUTES, NO_LINKS).decision;
    if (decision !== SamplingDecision.RECORD_AND_SAMPLED) {
      // Not recorded: the client's trace (if any) goes on to subgraphs with the sampled flag off, under a new span id.
      return { forward: remote ? { traceId, spanId: ids.generateSpanId(), traceFlags: TraceFlags.NONE, traceState: remote.traceState } : undefined };
    }
    // Built for this span, so owned by it; they carry client input (the user agent): cut at the limit in place.
    const own = attributes();
    for (const key in own) {
      const value = own[key];
      if (value === undefined) continue;
      const fitted = fitValue(value, this.valueLengthLimit);
      if (fitted !== value) own[key] = fitted;
    }
    const recorded = new RecordedSpan(this, traceId, ids.generateSpanId(), TraceFlags.SAMPLED, remote?.traceState, remote, name, kind, startMs, own, true);
    return { recorded };
  }

  ended(span: RecordedSpan): void {
    for (const processor of this.processors) processor.onEnd(span);
  }

  async forceFlush(): Promise<void> {
    await Promise.all(this.processors.map((p) => p.forceFlush()));
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.processors.map((p) => p.shutdown()));
  }
}

/** The W3C `traceparent` (and `tracestate`) naming `context`, added to `headers`. */
export function writeTraceContext(context: SpanContext, headers: Record<string, string>): void {
  headers.traceparent = `00-${context.traceId}-${context.spanId}-0${context.traceFlags & TraceFlags.SAMPLED}`;
  const state = context.traceState?.serialize();
  if (state) headers.tracestate = state;
}
