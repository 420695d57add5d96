/**
 * Spans from the pipeline's hooks. One SERVER span per operation
 * (continuing the client's W3C trace context), INTERNAL children for parse,
 * validate, plan and execute, and one CLIENT span per subgraph fetch, whose
 * context goes to the subgraph in `traceparent`. Every span
 * ends in a `whenSettled` listener, so a stage that throws still ends its
 * span, with the error recorded on it.
 *
 * Spans are recorded by span-recorder.ts; a child is made from its parent
 * span (no context objects, no global context manager, no
 * AsyncLocalStorage): nothing here is registered globally.
 */

import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, type Attributes, type SpanContext, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { clientValue, RouterError, StateKey, type Hooks, type StageOutcome, type OperationRequest, type OperationResponse, type RequestState } from '../../src/index.js';
import { persistedQueryResolved } from '../../src/operations/index.js';
import { cacheCounts, takeFetchStatus } from './cache-status.js';
import { operationFacts, type OperationFacts } from './operation-facts.js';
import { type RecordedSpan, type SpanRecorder, writeTraceContext } from './span-recorder.js';
import { splitHost, type SubgraphAttributeCache } from './subgraph-attributes.js';

/** What the hooks work with; built by start-telemetry.ts. */
export interface TelemetryRuntime {
  readonly recorder: SpanRecorder;
  /** Adds `graphql.document` to operation spans. */
  readonly includeDocument: boolean;
  /** Client span attributes per subgraph. */
  readonly subgraphAttributes: SubgraphAttributeCache;
}

/** One operation as telemetry follows it. */
interface RequestTelemetry {
  readonly request: OperationRequest;
  /** The SERVER span; undefined when the trace is not recorded (then no span at all is made). */
  readonly span: RecordedSpan | undefined;
  /** Not recorded, but the client sent a trace: the context sent on to subgraphs (sampled flag off). */
  readonly forward: SpanContext | undefined;
  /** The `execute` span while it runs: the parent of fetch spans. */
  execute: RecordedSpan | undefined;
  facts: OperationFacts | undefined;
  /** The operation text that was parsed (a persisted operation's text too), kept only for `include_document`. */
  text: string | undefined;
  /** Response-cache record entries already matched to a fetch span. */
  taken: Set<object> | undefined;
  /** A persisted operation id sent without text. */
  readonly persistedId: string | undefined;
  /** Whether the plan came from the router's plan cache; undefined before planning or when a plugin supplied the plan. */
  planCacheHit: boolean | undefined;
}

const TELEMETRY = new StateKey<RequestTelemetry>('telemetry');

const propagator = new W3CTraceContextPropagator();

const headerGetter: TextMapGetter<Readonly<Record<string, string>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/** Validation or subgraph errors recorded as exception events on one span, at most. */
const MAX_ERROR_EVENTS = 10;

export function telemetryHooks(runtime: TelemetryRuntime): Hooks {
  const { recorder, subgraphAttributes } = runtime;
  /**
   * Plans the plan stage has answered before. The kernel's plan cache hands
   * out the same object for the same operation, and a new one once it built
   * one again: a plan seen before came from the cache.
   */
  const seenPlans = new WeakSet<object>();

  const finish = (record: RequestTelemetry, state: RequestState, response: OperationResponse | undefined, error: unknown): void => {
    const status = response?.status ?? (error instanceof RouterError && error.status !== undefined ? error.status : 500);
    const facts = record.facts;
    const cache = cacheCounts(state);
    if (record.execute) {
      record.execute.end(clockNow());
      record.execute = undefined;
    }
    const span = record.span;
    if (span) {
      // Written straight onto the span (its own object): no attribute set built to be copied.
      span.setAttribute('http.response.status_code', status);
      if (facts) {
        if (facts.name !== undefined) span.setAttribute('graphql.operation.name', facts.name);
        if (facts.type !== undefined) span.setAttribute('graphql.operation.type', facts.type);
        span.setAttribute('switchyard.operation.hash', facts.hash);
        if (record.planCacheHit !== undefined) span.setAttribute('switchyard.plan_cache_hit', record.planCacheHit);
        if (facts.type !== undefined) span.updateName(facts.name ? `${facts.type} ${facts.name}` : facts.type);
      }
      if (record.text !== undefined) span.setAttribute('graphql.document', record.text);
      if (cache) {
        span.setAttribute('switchyard.response_cache.hits', cache.hits);
        span.setAttribute('switchyard.response_cache.partial_hits', cache.partialHits);
        span.setAttribute('switchyard.response_cache.misses', cache.misses);
      }
      const errors = response?.body.errors;
      if (errors && errors.length > 0) span.setAttribute('switchyard.graphql.error_count', errors.length);
      if (record.persistedId !== undefined) {
        span.addEvent('persisted_operation.lookup', {
          // Ids are 64 hex characters (a few more for Cosmo ids); the client may send anything.
          'switchyard.persisted_operation.id': clientValue(record.persistedId),
          'switchyard.persisted_operation.found': state.get(persistedQueryResolved) === true,
        });
      }
      if (error !== undefined) fail(span, error);
      else if (status >= 500) {
        const code = errors?.[0]?.extensions?.code;
        span.setAttribute('error.type', typeof code === 'string' ? code : String(status));
        span.setStatus({ code: SpanStatusCode.ERROR, message: errors?.[0]?.message });
      }
    }
    span?.end(clockNow());
  };

  const hooks: Hooks = {
    onRequest(event) {
      const request = event.input;
      const parent = request.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
      const started = recorder.startRoot(operationSpanName(request), SpanKind.SERVER, clockNow(), parent, () => requestAttributes(request));
      const span = started.recorded;
      const record: RequestTelemetry = {
        request,
        span,
        forward: started.forward,
        execute: undefined,
        facts: undefined,
        text: undefined,
        taken: undefined,
        persistedId: request.query === undefined ? persistedIdOf(request) : undefined,
        planCacheHit: undefined,
      };
      event.state.set(TELEMETRY, record);
      // An unrecorded trace has nothing to finish (its span's end is a no-op).
      if (span) {
        event.whenSettled((outcome) => finish(record, event.state, outcome.ok ? outcome.output : undefined, outcome.ok ? undefined : outcome.error));
      }
    },

    onParse(event) {
      const record = event.state.get(TELEMETRY);
      if (!record?.span) return;
      const span = record.span.child('parse', SpanKind.INTERNAL, clockNow());
      if (span && runtime.includeDocument) record.text = event.input.query;
      event.whenSettled((outcome) => {
        if (outcome.ok) {
          record.facts ??= operationFacts(outcome.output, record.request.operationName);
        } else fail(span, outcome.error);
        span.end(clockNow());
      });
    },

    onPlan(event) {
      const record = event.state.get(TELEMETRY);
      if (!record) return;
      // Every plan is noted, sampled or not, so that a sampled request later knows a cached plan when it gets one.
      const notePlan = (outcome: StageOutcome<'plan'>): void => {
        if (!outcome.ok || outcome.shortCircuitedBy !== undefined) return;
        record.planCacheHit = seenPlans.has(outcome.output);
        if (!record.planCacheHit) seenPlans.add(outcome.output);
      };
      const root = record.span;
      // A running subscription planned again on a reloaded graph: its request span has ended, and events are not traced.
      if (!root || root.ended) {
        event.whenSettled(notePlan);
        return;
      }
      // The plan's operation name is the one that runs (a plugin may have set it after the request arrived).
      record.facts = operationFacts(event.input.document, event.input.operationName);
      const span = root.child('plan', SpanKind.INTERNAL, clockNow());
      // One listener for both: a traced request's stages are many listeners already.
      event.whenSettled((outcome) => {
        notePlan(outcome);
        if (!outcome.ok) {
          fail(span, outcome.error);
          span.end(clockNow());
          return;
        }
        if (record.planCacheHit !== undefined) span.setAttribute('switchyard.plan_cache_hit', record.planCacheHit);
        span.end(clockNow());
        record.execute = root.child('execute', SpanKind.INTERNAL, clockNow());
      });
    },

    onFetch(event) {
      const record = event.state.get(TELEMETRY);
      if (!record) return;
      const input = event.input;
      const parent = record.execute ?? record.span;
      if (!parent) {
        if (record.forward) event.setInput({ ...input, headers: withTraceContext(input.headers, record.forward) });
        // Nothing to forward: a client's traceparent or tracestate that a header rule copied does not reach the subgraph either.
        else if (input.headers.traceparent !== undefined || input.headers.tracestate !== undefined) {
          event.setInput({ ...input, headers: withoutTraceContext(input.headers) });
        }
        return;
      }
      if (parent.ended) {
        // A subscription event's fetch, after its request span ended: not traced (a stream may carry millions of events),
        // but the subgraph still learns which trace it belongs to, with the sampled flag off.
        event.setInput({
          ...input,
          headers: withTraceContext(input.headers, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: TraceFlags.NONE, traceState: parent.traceState }),
        });
        return;
      }
      // The attribute set is shared by the fetch spans of this shape (the span copies it if it adds one).
      const shape = subgraphAttributes.fetchSpan(input);
      const span = parent.child(shape.name, SpanKind.CLIENT, clockNow(), shape.attributes(input.representations?.length));
      event.setInput({ ...input, headers: withTraceContext(input.headers, span) });
      event.whenSettled((outcome) => {
        const answeredBy = outcome.ok ? outcome.shortCircuitedBy : undefined;
        if (answeredBy !== undefined) span.setAttribute('switchyard.fetch.answered_by', answeredBy);
        const cacheStatus = takeFetchStatus(event.state, (record.taken ??= new Set()), input.subgraph, input.kind);
        if (cacheStatus !== undefined) span.setAttribute('switchyard.response_cache.status', cacheStatus);
        if (!outcome.ok) {
          const status = httpStatusOf(outcome.error);
          if (status !== undefined) span.setAttribute('http.response.status_code', status);
          fail(span, outcome.error);
        } else {
          const errors = outcome.output.errors;
          if (errors && errors.length > 0) {
            span.setAttribute('switchyard.graphql.error_count', errors.length);
            for (const error of errors.slice(0, MAX_ERROR_EVENTS)) span.recordException({ name: 'GraphQLError', message: error.message });
            span.setStatus({ code: SpanStatusCode.ERROR, message: errors[0]!.message });
          }
        }
        span.end(clockNow());
      });
    },
  };

  hooks.onValidate = (event) => {
    const record = event.state.get(TELEMETRY);
    if (!record?.span) return;
    const span = record.span.child('validate', SpanKind.INTERNAL, clockNow());
    event.whenSettled((outcome) => {
      if (!outcome.ok) fail(span, outcome.error);
      else if (outcome.output.length > 0) {
        span.setAttribute('switchyard.graphql.error_count', outcome.output.length);
        for (const error of outcome.output.slice(0, MAX_ERROR_EVENTS)) span.recordException({ name: 'GraphQLError', message: error.message });
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.output[0]!.message });
      }
      span.end(clockNow());
    });
  };

  hooks.onMerge = (event) => {
    const record = event.state.get(TELEMETRY);
    if (!record?.execute) return;
    event.whenSettled((outcome) => {
      const execute = record.execute;
      if (!execute) return;
      if (!outcome.ok) fail(execute, outcome.error);
      execute.end(clockNow());
      record.execute = undefined;
    });
  };

  return hooks;
}

const HTTP_SPAN_NAMES: Readonly<Record<OperationRequest['method'], string>> = { GET: 'GET /graphql', POST: 'POST /graphql' };

/** The operation span's name until the operation is known: `POST /graphql`, or the listener for side listeners. */
function operationSpanName(request: OperationRequest): string {
  return request.origin === 'http' ? (HTTP_SPAN_NAMES[request.method] ?? `${request.method} /graphql`) : `${request.origin} operation`;
}

function requestAttributes(request: OperationRequest): Attributes {
  const attributes: Attributes = { 'http.request.method': request.method, 'switchyard.origin': request.origin };
  // A Connect call is an RPC to the router (OpenTelemetry's RPC conventions name Connect `connect_rpc`).
  if (request.origin === 'connect') attributes['rpc.system'] = 'connect_rpc';
  if (request.origin === 'http') {
    attributes['url.path'] = '/graphql';
    attributes['http.route'] = '/graphql';
  }
  const host = request.headers.host;
  if (host) {
    const { address, port } = hostOf(host);
    attributes['server.address'] = address;
    if (port !== undefined) attributes['server.port'] = port;
  }
  const userAgent = request.headers['user-agent'];
  if (userAgent) attributes['user_agent.original'] = userAgent;
  if (request.clientName !== undefined) attributes['switchyard.client.name'] = request.clientName;
  const clientVersion = request.headers['graphql-client-version'];
  if (clientVersion) attributes['switchyard.client.version'] = clientVersion;
  return attributes;
}

/** `Host` headers seen lately, split: clients send a handful of them, and the split is a regular expression. */
const hosts = new Map<string, { address: string; port: number | undefined }>();
const MAX_HOSTS = 64;
/** Longer `Host` values are split each time, not kept. */
const MAX_KEPT_HOST_LENGTH = 256;

function hostOf(host: string): { address: string; port: number | undefined } {
  if (host.length > MAX_KEPT_HOST_LENGTH) return splitHost(host);
  let split = hosts.get(host);
  if (!split) {
    split = splitHost(host);
    // A client may send any Host: keep the map bounded (starting over is cheap).
    if (hosts.size >= MAX_HOSTS) hosts.clear();
    hosts.set(host, split);
  }
  return split;
}

function persistedIdOf(request: OperationRequest): string | undefined {
  const extension = request.extensions?.persistedQuery as { sha256Hash?: unknown } | undefined;
  if (extension && typeof extension.sha256Hash === 'string') return extension.sha256Hash;
  return request.documentId;
}

function httpStatusOf(error: unknown): number | undefined {
  if (!(error instanceof RouterError)) return undefined;
  const http = error.extensions?.http as { status?: unknown } | undefined;
  return typeof http?.status === 'number' ? http.status : undefined;
}

/**
 * The fetch's headers with the W3C trace context of `context` in place of any
 * a header rule copied from the client: the router decides what subgraphs
 * get. A client's `tracestate` belongs to the client's trace only; the W3C
 * spec forbids carrying it into a trace the router restarted (its
 * `traceparent` was invalid, or missing).
 */
function withTraceContext(headers: Readonly<Record<string, string>>, context: SpanContext): Record<string, string> {
  // Usually no rule copied either header: a plain copy then (the quicker one, on every traced fetch).
  const out = headers.traceparent === undefined && headers.tracestate === undefined ? { ...headers } : withoutTraceContext(headers);
  writeTraceContext(context, out);
  return out;
}

/** A copy of the fetch's headers without `traceparent` and `tracestate` (rules write lower-case names). */
function withoutTraceContext(headers: Readonly<Record<string, string>>): Record<string, string> {
  const { traceparent: _traceparent, tracestate: _tracestate, ...rest } = headers;
  return rest;
}

/** Status ERROR, `error.type`, and the exception as an event, on the span that failed. */
function fail(span: RecordedSpan, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setAttribute('error.type', error instanceof RouterError ? error.code : exception.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
}

/** Read once: `performance.timeOrigin` is a getter, and clockNow runs twice per span. */
const TIME_ORIGIN = performance.timeOrigin;

/**
 * Span times from one monotonic clock. The SDK stamps a span's start with
 * Date.now() (whole milliseconds) and measures its duration finely, so a
 * child started in the same millisecond as its parent could appear to end
 * after it; explicit times keep every child inside its parent.
 */
function clockNow(): number {
  return TIME_ORIGIN + performance.now();
}
