/**
 * Starts telemetry for one router: a span recorder (span-recorder.ts) feeding
 * one SDK batching processor per trace exporter, and a meter provider with a
 * periodic reader per metric exporter, which exports the router's own
 * metrics (metric-producer.ts). Exporters speak OTLP/HTTP with protobuf
 * bodies, OTLP/HTTP with JSON bodies (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`)
 * or OTLP/gRPC (grpc-exporters.ts); the JSON and gRPC exporters are loaded
 * only when one is used. Loaded only when a signal is enabled. Nothing is registered
 * globally (two routers in one process keep their own).
 */

import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type ReadableSpan, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ExportResult } from '@opentelemetry/core';
import { splitUrlCredentials, stripUrlCredentials, type Logger, type PluginContext, type PluginInstance } from '../../src/index.js';
import type { GrpcExporterOptions } from './grpc-exporters.js';
import { exportTargets, resolveServiceName, type ExportTarget } from './otel-env.js';
import type { ResolvedTelemetryOptions } from './options.js';
import { RouterMetricProducer } from './metric-producer.js';
import { SpanRecorder } from './span-recorder.js';
import { SubgraphAttributeCache } from './subgraph-attributes.js';
import { telemetryHooks } from './telemetry-hooks.js';

/** Instrumentation scope of the router's spans and metrics. */
export const INSTRUMENTATION_SCOPE = 'switchyard';

/** Longest `stop()` waits for the last exports, whatever the exporters' timeouts. */
const MAX_SHUTDOWN_MS = 5_000;
/** At most one export failure warning per exporter in this period. */
const FAILURE_LOG_INTERVAL_MS = 30_000;
/** Longest attribute value kept (a long `graphql.document` is cut). */
const MAX_ATTRIBUTE_LENGTH = 16 * 1024;

/**
 * The resource every span and metric of this process carries. Each process
 * (each `--workers` worker) exports its own cumulative series, so they must
 * not collide: `service.instance.id` is random, and one set through
 * `OTEL_RESOURCE_ATTRIBUTES` (a pod's name, say) gets `-worker-<n>` in a worker.
 */
export function processResource(serviceName: string, workerId: number | undefined): Resource {
  const random = randomUUID();
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.instance.id': random }))
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': serviceName }));
  const instance = resource.attributes['service.instance.id'];
  if (workerId === undefined || instance === random) return resource;
  return resource.merge(resourceFromAttributes({ 'service.instance.id': `${String(instance)}-worker-${workerId}` }));
}

export async function startTelemetry(ctx: PluginContext, options: ResolvedTelemetryOptions, env: NodeJS.ProcessEnv = process.env): Promise<PluginInstance> {
  const serviceName = resolveServiceName(options.service_name, env);
  const resource = processResource(serviceName, cluster.isWorker ? cluster.worker?.id : undefined);
  const traceTargets = options.tracing.enabled ? exportTargets('traces', options.tracing.exporters, env) : [];
  const metricTargets = options.metrics.otlp.enabled ? exportTargets('metrics', options.metrics.otlp.exporters, env) : [];
  const uses = (protocol: ExportTarget['protocol']): boolean => [...traceTargets, ...metricTargets].some((target) => target.protocol === protocol);
  const grpc = uses('grpc') ? await import('./grpc-exporters.js') : undefined;
  const json = uses('http/json') ? await jsonExporters() : undefined;
  const spanExporterOf = (target: ExportTarget): SpanExporter =>
    target.protocol === 'grpc'
      ? grpc!.grpcSpanExporter(exporterOptions(target))
      : target.protocol === 'http/json'
        ? new json!.JsonTraceExporter(exporterOptions(target))
        : new OTLPTraceExporter(exporterOptions(target));
  const metricExporterOf = (target: ExportTarget): PushMetricExporter =>
    target.protocol === 'grpc'
      ? grpc!.grpcMetricExporter(exporterOptions(target))
      : target.protocol === 'http/json'
        ? new json!.JsonMetricExporter(exporterOptions(target))
        : new OTLPMetricExporter(exporterOptions(target));
  for (const [signal, targets] of [
    ['traces', traceTargets],
    ['metrics', metricTargets],
  ] as const) {
    for (const target of targets) {
      if (target.unsupportedProtocol) {
        // As the OpenTelemetry JS SDK does: an unsupported protocol falls back to OTLP/HTTP with protobuf.
        ctx.log.warn({ signal, ...target.unsupportedProtocol }, 'Telemetry protocol not supported; exporting OTLP/HTTP with protobuf (http/protobuf)');
      }
      if (target.ignoredPath === undefined) continue;
      // As Cosmo does: gRPC has no URL path, so one that was written is ignored, with a warning.
      ctx.log.warn({ signal, endpoint: stripUrlCredentials(target.url), path: target.ignoredPath }, 'Telemetry exporter path ignored: OTLP/gRPC has no URL path');
    }
  }

  let recorder: SpanRecorder | undefined;
  if (options.tracing.enabled) {
    const { tracing } = options;
    const processors = traceTargets.map(
      (target) =>
        new BatchSpanProcessor(new ReportingSpanExporter(spanExporterOf(target), ctx.log, target), {
          maxQueueSize: tracing.max_queue_size,
          maxExportBatchSize: Math.min(tracing.max_export_batch_size, tracing.max_queue_size),
          scheduledDelayMillis: target.batchTimeoutMs,
          exportTimeoutMillis: target.timeoutMs,
        }),
    );
    recorder = new SpanRecorder(resource, { name: INSTRUMENTATION_SCOPE }, MAX_ATTRIBUTE_LENGTH, samplerOf(tracing.sampling_rate, tracing.parent_based_sampler), processors);
  }

  const subgraphAttributes = new SubgraphAttributeCache(() => ctx.router.graph);
  let meterProvider: MeterProvider | undefined;
  if (options.metrics.otlp.enabled) {
    const interval = options.metrics.otlp.export_interval;
    // The router's own instruments (the Prometheus series), read at each export: no OpenTelemetry instruments of its own.
    const producer = new RouterMetricProducer(ctx.metrics, subgraphAttributes, resource);
    meterProvider = new MeterProvider({
      resource,
      readers: metricTargets.map(
        (target) =>
          new PeriodicExportingMetricReader({
            exporter: new ReportingMetricExporter(metricExporterOf(target), ctx.log, target),
            exportIntervalMillis: interval,
            exportTimeoutMillis: Math.min(target.timeoutMs, interval),
            metricProducers: [producer],
          }),
      ),
    });
  }

  ctx.log.info(
    {
      service_name: serviceName,
      tracing: options.tracing.enabled,
      sampling_rate: options.tracing.enabled ? options.tracing.sampling_rate : undefined,
      // Credentials in an endpoint (`user:password@`) stay out of logs.
      trace_exporters: traceTargets.map((t) => stripUrlCredentials(t.url)),
      metric_exporters: metricTargets.map((t) => stripUrlCredentials(t.url)),
      // `http` (OTLP/HTTP, protobuf), `http/json` or `grpc`, one per exporter above.
      trace_protocols: traceTargets.map((t) => t.protocol),
      metric_protocols: metricTargets.map((t) => t.protocol),
    },
    'Telemetry enabled',
  );

  return {
    // Metrics alone need no hooks: the kernel records them.
    hooks: recorder ? telemetryHooks({ recorder, includeDocument: options.tracing.include_document, subgraphAttributes }) : undefined,
    async stop() {
      // Delivers what is queued, but never holds the router's shutdown longer than MAX_SHUTDOWN_MS.
      const timeouts = [...traceTargets, ...metricTargets].map((t) => t.timeoutMs);
      const bound = Math.min(MAX_SHUTDOWN_MS, Math.max(100, ...timeouts));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([recorder?.shutdown(), meterProvider?.shutdown()]),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, bound);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}

/** The OpenTelemetry OTLP/HTTP exporters with JSON bodies (the SDK's own), loaded only when `http/json` is asked for. */
async function jsonExporters() {
  const [traces, metrics] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-http'), import('@opentelemetry/exporter-metrics-otlp-http')]);
  return { JsonTraceExporter: traces.OTLPTraceExporter, JsonMetricExporter: metrics.OTLPMetricExporter };
}

/**
 * An OTLP exporter's options. The SDK drops `user:password@` from the URL
 * without sending it; it goes as HTTP Basic authorization instead (a
 * configured `Authorization` header wins), over gRPC as `authorization`
 * metadata.
 */
function exporterOptions(target: ExportTarget): GrpcExporterOptions & { url: string; headers: Record<string, string>; timeoutMillis: number } {
  const { url, authorization } = splitUrlCredentials(target.url);
  const headers: Record<string, string> = { ...target.headers };
  if (authorization !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) headers.authorization = authorization;
  return { url, headers, timeoutMillis: target.timeoutMs };
}

function samplerOf(rate: number, parentBased: boolean): Sampler {
  const root = new TraceIdRatioBasedSampler(rate);
  return parentBased ? new ParentBasedSampler({ root }) : root;
}

/** Logs failed exports (at most once per FAILURE_LOG_INTERVAL_MS), never headers or URL credentials. */
class FailureReporter {
  private lastLogged = Number.NEGATIVE_INFINITY;
  private dropped = 0;

  constructor(
    private readonly log: Logger,
    private readonly target: ExportTarget,
    private readonly signal: 'traces' | 'metrics',
  ) {}

  report(result: ExportResult): void {
    if (result.code === 0) return;
    this.dropped++;
    const now = performance.now();
    if (now - this.lastLogged < FAILURE_LOG_INTERVAL_MS) return;
    this.lastLogged = now;
    this.log.warn(
      {
        signal: this.signal,
        protocol: this.target.protocol,
        endpoint: stripUrlCredentials(this.target.url),
        failed_exports: this.dropped,
        err_message: result.error?.message,
      },
      'Telemetry export failed; data dropped',
    );
    this.dropped = 0;
  }
}

class ReportingSpanExporter implements SpanExporter {
  private readonly reporter: FailureReporter;

  constructor(
    private readonly inner: SpanExporter,
    log: Logger,
    target: ExportTarget,
  ) {
    this.reporter = new FailureReporter(log, target, 'traces');
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    // The batch processor exports from inside the span.end() that filled a
    // batch, i.e. on some request's path: encoding 512 spans there would hold
    // that request (and the event loop) for a few milliseconds. The next turn
    // of the loop does it instead, between requests.
    setImmediate(() => {
      this.inner.export(spans, (result) => {
        this.reporter.report(result);
        resultCallback(result);
      });
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

class ReportingMetricExporter implements PushMetricExporter {
  private readonly reporter: FailureReporter;
  readonly selectAggregationTemporality: PushMetricExporter['selectAggregationTemporality'];
  readonly selectAggregation: PushMetricExporter['selectAggregation'];

  constructor(
    private readonly inner: PushMetricExporter,
    log: Logger,
    target: ExportTarget,
  ) {
    this.reporter = new FailureReporter(log, target, 'metrics');
    this.selectAggregationTemporality = inner.selectAggregationTemporality?.bind(inner);
    this.selectAggregation = inner.selectAggregation?.bind(inner);
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.inner.export(metrics, (result) => {
      this.reporter.report(result);
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
}
