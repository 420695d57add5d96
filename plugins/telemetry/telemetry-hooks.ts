/**
 * Spans and OTLP metrics from the pipeline's hooks. One SERVER span per
 * operation (continuing the client's W3C trace context), INTERNAL children
 * for parse, validate, plan and execute, and one CLIENT span per subgraph
 * fetch, whose context goes to the subgraph in `traceparent`. Every span
 * ends in a `whenSettled` listener, so a stage that throws still ends its
 * span, with the error recorded on it.
 *
 * Contexts are passed explicitly (no global context manager, no
 * AsyncLocalStorage): nothing here is registered globally.
 */

import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Histogram as OtelHistogram,
  type Counter as OtelCounter,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { RouterError, StateKey, type GraphInfo, type Hooks, type OperationRequest, type OperationResponse, type RequestState } from '../../src/index.js';
import { persistedQueryResolved } from '../../src/operations/index.js';
import { cacheCounts, takeFetchStatus } from './cache-status.js';
import { operationFacts, type OperationFacts } from './operation-facts.js';
import { splitHost, SubgraphAttributeCache } from './subgraph-attributes.js';

/** The instruments of OTLP metrics (semantic-convention names where they exist). */
export interface TelemetryInstruments {
  /** `http.server.request.duration`, seconds: one per operation. */
  readonly requestDuration: OtelHistogram;
  /** `http.client.request.duration`, seconds: one per subgraph call that left the router. */
  readonly subgraphDuration: OtelHistogram;
  /** `switchyard.response_cache.fetches`: fetches the response cache looked up, by status. */
  readonly cacheFetches: OtelCounter;
}

/** What the hooks work with; built by start-telemetry.ts. */
export interface TelemetryRuntime {
  /** Undefined when tracing is off. */
  readonly tracer: Tracer | undefined;
  /** Undefined when OTLP metrics are off. */
  readonly instruments: TelemetryInstruments | undefined;
  /** Adds `graphql.document` to operation spans. */
  readonly includeDocument: boolean;
  /** The graph being served (subgraph URLs for client span attributes). */
  readonly graph: () => GraphInfo | undefined;
}

/** One operation as telemetry follows it. */
interface RequestTelemetry {
  readonly started: number;
  readonly request: OperationRequest;
  /** The SERVER span (recording or not); undefined when tracing is off. */
  readonly span: Span | undefined;
  /** Context holding `span`; what subgraph calls continue. */
  readonly context: Context | undefined;
  /** The span records (it was sampled): children are made only then. */
  readonly recording: boolean;
  /** Trace context is sent to subgraphs: the trace is sampled, or the client sent one. */
  readonly propagate: boolean;
  execute: Span | undefined;
  executeContext: Context | undefined;
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

const headerSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key.toLowerCase()] = value;
  },
};

/** Validation or subgraph errors recorded as exception events on one span, at most. */
const MAX_ERROR_EVENTS = 10;

/** Histogram boundaries (seconds) the HTTP semantic conventions advise for durations. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

export function telemetryHooks(runtime: TelemetryRuntime): Hooks {
  const { tracer, instruments } = runtime;
  const subgraphAttributes = new SubgraphAttributeCache(runtime.graph);
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
    if (span && record.recording) {
      const attributes: Attributes = { 'http.response.status_code': status };
      if (facts) {
        if (facts.name !== undefined) attributes['graphql.operation.name'] = facts.name;
        if (facts.type !== undefined) attributes['graphql.operation.type'] = facts.type;
        attributes['switchyard.operation.hash'] = facts.hash;
        if (record.planCacheHit !== undefined) attributes['switchyard.plan_cache_hit'] = record.planCacheHit;
        if (facts.type !== undefined) span.updateName(facts.name ? `${facts.type} ${facts.name}` : facts.type);
      }
      if (record.text !== undefined) attributes['graphql.document'] = record.text;
      if (cache) {
        attributes['switchyard.response_cache.hits'] = cache.hits;
        attributes['switchyard.response_cache.partial_hits'] = cache.partialHits;
        attributes['switchyard.response_cache.misses'] = cache.misses;
      }
      const errors = response?.body.errors;
      if (errors && errors.length > 0) attributes['switchyard.graphql.error_count'] = errors.length;
      span.setAttributes(attributes);
      if (record.persistedId !== undefined) {
        span.addEvent('persisted_operation.lookup', {
          'switchyard.persisted_operation.id': record.persistedId,
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
    if (instruments) {
      const attributes: Attributes = { 'http.request.method': record.request.method, 'http.response.status_code': status };
      if (facts?.type !== undefined) attributes['graphql.operation.type'] = facts.type;
      if (status >= 500) attributes['error.type'] = String(status);
      instruments.requestDuration.record((performance.now() - record.started) / 1000, attributes);
      if (cache) {
        if (cache.hits > 0) instruments.cacheFetches.add(cache.hits, { 'switchyard.response_cache.status': 'hit' });
        if (cache.partialHits > 0) instruments.cacheFetches.add(cache.partialHits, { 'switchyard.response_cache.status': 'partial_hit' });
        if (cache.misses > 0) instruments.cacheFetches.add(cache.misses, { 'switchyard.response_cache.status': 'miss' });
      }
    }
  };

  const hooks: Hooks = {
    onRequest(event) {
      const request = event.input;
      let span: Span | undefined;
      let context: Context | undefined;
      let recording = false;
      let propagate = false;
      if (tracer) {
        const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
        span = tracer.startSpan(operationSpanName(request), { startTime: clockNow(), kind: SpanKind.SERVER }, parent);
        recording = span.isRecording();
        propagate = recording || trace.getSpanContext(parent) !== undefined;
        // Unsampled and without a client trace, the request records nothing and sends no trace context: no context is needed.
        if (propagate) context = trace.setSpan(parent, span);
        if (recording) span.setAttributes(requestAttributes(request));
      }
      const record: RequestTelemetry = {
        started: performance.now(),
        request,
        span,
        context,
        recording,
        propagate,
        execute: undefined,
        executeContext: undefined,
        facts: undefined,
        text: undefined,
        taken: undefined,
        persistedId: request.query === undefined ? persistedIdOf(request) : undefined,
        planCacheHit: undefined,
      };
      event.state.set(TELEMETRY, record);
      // An unrecorded trace without metrics has nothing to finish (its span's end is a no-op).
      if (recording || instruments) {
        event.whenSettled((outcome) => finish(record, event.state, outcome.ok ? outcome.output : undefined, outcome.ok ? undefined : outcome.error));
      }
    },

    onParse(event) {
      const record = event.state.get(TELEMETRY);
      if (!record || (!record.recording && !instruments)) return;
      const span = record.recording ? tracer!.startSpan('parse', { startTime: clockNow(), kind: SpanKind.INTERNAL }, record.context) : undefined;
      if (span && runtime.includeDocument) record.text = event.input.query;
      event.whenSettled((outcome) => {
        if (outcome.ok) {
          record.facts ??= operationFacts(outcome.output, record.request.operationName);
        } else if (span) fail(span, outcome.error);
        span?.end(clockNow());
      });
    },

    onPlan(event) {
      const record = event.state.get(TELEMETRY);
      if (!record) return;
      // Every plan is noted, sampled or not, so that a sampled request later knows a cached plan when it gets one.
      if (tracer) {
        event.whenSettled((outcome) => {
          if (!outcome.ok || outcome.shortCircuitedBy !== undefined) return;
          record.planCacheHit = seenPlans.has(outcome.output);
          if (!record.planCacheHit) seenPlans.add(outcome.output);
        });
      }
      if (!record.recording && !instruments) return;
      // The plan's operation name is the one that runs (a plugin may have set it after the request arrived).
      record.facts = operationFacts(event.input.document, event.input.operationName);
      if (!record.recording) return;
      const span = tracer!.startSpan('plan', { startTime: clockNow(), kind: SpanKind.INTERNAL }, record.context);
      event.whenSettled((outcome) => {
        if (!outcome.ok) {
          fail(span, outcome.error);
          span.end(clockNow());
          return;
        }
        if (record.planCacheHit !== undefined) span.setAttribute('switchyard.plan_cache_hit', record.planCacheHit);
        span.end(clockNow());
        record.execute = tracer!.startSpan('execute', { startTime: clockNow(), kind: SpanKind.INTERNAL }, record.context);
        record.executeContext = trace.setSpan(record.context!, record.execute);
      });
    },

    onFetch(event) {
      const record = event.state.get(TELEMETRY);
      if (!record) return;
      const input = event.input;
      let span: Span | undefined;
      if (record.propagate) {
        const parent = record.executeContext ?? record.context!;
        let context = parent;
        if (record.recording) {
          span = tracer!.startSpan(`fetch ${input.subgraph}`, { startTime: clockNow(), kind: SpanKind.CLIENT, attributes: subgraphAttributes.span(input) }, parent);
          if (input.representations) span.setAttribute('switchyard.fetch.entities', input.representations.length);
          context = trace.setSpan(parent, span);
        }
        const headers: Record<string, string> = { ...input.headers };
        propagator.inject(context, headers, headerSetter);
        event.setInput({ ...input, headers });
      }
      if (!span && !instruments) return;
      const started = instruments ? performance.now() : 0;
      event.whenSettled((outcome) => {
        const answeredBy = outcome.ok ? outcome.shortCircuitedBy : undefined;
        if (span) {
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
        }
        if (instruments && answeredBy === undefined) {
          const errorType = outcome.ok ? undefined : outcome.error instanceof RouterError ? outcome.error.code : 'failed';
          instruments.subgraphDuration.record((performance.now() - started) / 1000, subgraphAttributes.metric(input.subgraph, errorType));
        }
      });
    },
  };

  if (!tracer) return hooks;

  hooks.onValidate = (event) => {
    const record = event.state.get(TELEMETRY);
    if (!record?.recording) return;
    const span = tracer.startSpan('validate', { startTime: clockNow(), kind: SpanKind.INTERNAL }, record.context);
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

/** The operation span's name until the operation is known: `POST /graphql`, or the listener for side listeners. */
function operationSpanName(request: OperationRequest): string {
  return request.origin === 'http' ? `${request.method} /graphql` : `${request.origin} operation`;
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
    const { address, port } = splitHost(host);
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

/** Status ERROR, `error.type`, and the exception as an event, on the span that failed. */
function fail(span: Span, error: unknown): void {
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
