/**
 * The `telemetry` and `access_logs` sections of `router.config.yaml`, which
 * are also the options of `useTelemetry` and `useAccessLogs`. Kept free of
 * heavy imports: the CLI reads these schemas whether or not telemetry is on,
 * and the OpenTelemetry SDK loads only when a signal is enabled.
 *
 * `telemetry.metrics.prometheus.*` never reaches this schema: the config
 * loader rewrites it to `metrics.*` (Cosmo's name for the router's own
 * Prometheus endpoint) before validation.
 */

import { duration, url, z } from '../../src/index.js';

/** `service.name` when neither `telemetry.service_name` nor `OTEL_SERVICE_NAME` is set. */
export const DEFAULT_SERVICE_NAME = 'switchyard';
/** Path appended to the collector's base URL for traces (OTLP/HTTP). */
export const DEFAULT_TRACES_PATH = '/v1/traces';
/** Path appended to the collector's base URL for metrics (OTLP/HTTP). */
export const DEFAULT_METRICS_PATH = '/v1/metrics';
/** Collector base URL when neither the exporter nor `OTEL_EXPORTER_OTLP_ENDPOINT` gives one (the OpenTelemetry default for OTLP/HTTP). */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';
/** Collector address for OTLP/gRPC when neither the exporter nor the environment gives one (the OpenTelemetry default). */
export const DEFAULT_OTLP_GRPC_ENDPOINT = 'http://localhost:4317';
/** The exporter protocols: `http` is OTLP/HTTP with protobuf bodies, `grpc` OTLP over gRPC (Cosmo's names). */
export const EXPORTER_PROTOCOLS = ['http', 'grpc'] as const;
export type ExporterProtocol = (typeof EXPORTER_PROTOCOLS)[number];

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const exporterShape = {
  /** Switches this exporter off without removing it. Default: false. */
  disabled: z.boolean().default(false),
  /**
   * Protocol: `http` (OTLP/HTTP with protobuf bodies) or `grpc` (OTLP/gRPC,
   * collectors usually on port 4317). Default: `http`.
   */
  exporter: z.enum(EXPORTER_PROTOCOLS, { error: 'must be "http" (OTLP/HTTP, protobuf) or "grpc" (OTLP/gRPC)' }).default('http'),
  /**
   * `http`: base URL of the collector (`http://collector:4318`); `path` is
   * appended. `grpc`: the collector's address (`http://collector:4317`
   * plaintext, `https://...` TLS with the system's roots).
   * Default: `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4318`
   * (`http://localhost:4317` for `grpc`).
   */
  endpoint: url().optional(),
  /** Headers sent with every export (an API key, a tenant), as gRPC metadata for `grpc`. Values are never logged. Default: none. */
  headers: z.record(z.string().regex(headerName, { error: 'must be an HTTP header name' }), z.string()).default({}),
  /** Give up on one export after this long; the data of a failed export is dropped, requests never wait for it. Default: `10s`. */
  export_timeout: duration({ min: '1ms', max: '5m' }).prefault('10s'),
};

const pathSchema = z.string().startsWith('/', { error: 'must start with "/"' }).optional();

/**
 * `path` defaults to the signal's OTLP/HTTP path for `http` exporters. A
 * `grpc` exporter keeps `path` only as written (undefined when not): gRPC has
 * no URL path, so a written one is ignored with a warning at startup, as
 * Cosmo does.
 */
function defaultPath<T extends { exporter: ExporterProtocol; path?: string | undefined }>(signalPath: string): (entry: T) => T {
  return (entry) => (entry.exporter === 'http' && entry.path === undefined ? { ...entry, path: signalPath } : entry);
}

/** gRPC sends headers as metadata: lower-case keys of `0-9a-z_.-` (binary `-bin` keys aside) with printable ASCII values. */
function grpcMetadata(entry: { exporter: ExporterProtocol; headers: Record<string, string> }, ctx: z.RefinementCtx): void {
  if (entry.exporter !== 'grpc') return;
  for (const [name, value] of Object.entries(entry.headers)) {
    const key = name.toLowerCase();
    if (!/^[0-9a-z_.-]+$/.test(key) || key.endsWith('-bin')) {
      ctx.addIssue({ code: 'custom', path: ['headers', name], message: 'must be a gRPC metadata key (letters, digits, "-", "_", "."; not ending in "-bin")', input: undefined });
    } else if (!/^[\x20-\x7e]*$/.test(value)) {
      ctx.addIssue({ code: 'custom', path: ['headers', name], message: 'must be printable ASCII to be sent as gRPC metadata', input: undefined });
    }
  }
}

/** One trace exporter, Cosmo's shape. */
export const traceExporterSchema = z
  .strictObject({
    ...exporterShape,
    /** Path of the traces endpoint on the collector (`http` only). Default: `/v1/traces`. */
    path: pathSchema,
    /** Longest a finished span waits in the queue before it is exported (a batch goes out earlier when full). Default: `5s`. */
    batch_timeout: duration({ min: '1ms', max: '5m' }).prefault('5s'),
  })
  .superRefine(grpcMetadata)
  .transform(defaultPath(DEFAULT_TRACES_PATH));

/** One metric exporter, Cosmo's shape. */
export const metricExporterSchema = z
  .strictObject({
    ...exporterShape,
    /** Path of the metrics endpoint on the collector (`http` only). Default: `/v1/metrics`. */
    path: pathSchema,
  })
  .superRefine(grpcMetadata)
  .transform(defaultPath(DEFAULT_METRICS_PATH));

const tracingSchema = z.strictObject({
  /** Records spans and exports them over OTLP (HTTP or gRPC). Default: false. */
  enabled: z.boolean().default(false),
  /** Share of new traces recorded (head sampling), from 0 to 1. Default: 1. */
  sampling_rate: z.number().min(0).max(1).default(1),
  /** A request that carries a `traceparent` follows its sampled flag instead of `sampling_rate`. Default: true. */
  parent_based_sampler: z.boolean().default(true),
  /**
   * Where spans go. Default: one exporter from the environment, its protocol
   * from `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`
   * (`http/protobuf` unless set), at `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or
   * `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces` for HTTP), or the
   * OpenTelemetry default (`http://localhost:4318/v1/traces`, gRPC `http://localhost:4317`).
   */
  exporters: z.array(traceExporterSchema).default([]),
  /** Finished spans held while waiting for export; beyond it new spans are dropped (never requests slowed). Default: 2048. */
  max_queue_size: z.number().int().min(1).max(1_000_000).default(2048),
  /** Spans sent in one export request. Default: 512. */
  max_export_batch_size: z.number().int().min(1).max(1_000_000).default(512),
  /** Adds the operation text as `graphql.document` to the operation's span (it may hold literal arguments). Default: false. */
  include_document: z.boolean().default(false),
});

const metricsSchema = z.strictObject({
  /** OTLP metric export (the Prometheus endpoint is `metrics.*`, or Cosmo's `telemetry.metrics.prometheus.*`). */
  otlp: z
    .strictObject({
      /** Exports request and subgraph-call metrics over OTLP (HTTP or gRPC). Default: false. */
      enabled: z.boolean().default(false),
      /** Where metrics go. Default: as for traces, with `/v1/metrics` and the `..._METRICS_...` variables. */
      exporters: z.array(metricExporterSchema).default([]),
      /** How often metrics are exported. Default: `15s`. */
      export_interval: duration({ min: '10ms', max: '1h' }).prefault('15s'),
    })
    .prefault({}),
});

/** The `telemetry` section; `useTelemetry(options)` takes the same shape. */
export const telemetryOptionsSchema = z.strictObject({
  /** `service.name` of spans and metrics. Default: `OTEL_SERVICE_NAME`, else `switchyard`. */
  service_name: z.string().min(1).optional(),
  tracing: tracingSchema.prefault({}),
  metrics: metricsSchema.prefault({}),
});

/** The `access_logs` section; `useAccessLogs(options)` takes the same shape. */
export const accessLogsOptionsSchema = z.strictObject({
  /** One log line per request (operation, client, status, duration, subgraph calls, cache hits). Default: false. */
  enabled: z.boolean().default(false),
});

/** Telemetry options as written. */
export type TelemetryOptions = z.input<typeof telemetryOptionsSchema>;
/** Telemetry options with defaults applied. */
export type ResolvedTelemetryOptions = z.output<typeof telemetryOptionsSchema>;
export type ResolvedTraceExporter = z.output<typeof traceExporterSchema>;
export type ResolvedMetricExporter = z.output<typeof metricExporterSchema>;
/** Access log options as written. */
export type AccessLogsOptions = z.input<typeof accessLogsOptionsSchema>;
export type ResolvedAccessLogsOptions = z.output<typeof accessLogsOptionsSchema>;

/** Whether any telemetry signal is on (otherwise the plugin is not loaded). */
export function telemetryEnabled(options: ResolvedTelemetryOptions): boolean {
  return options.tracing.enabled || options.metrics.otlp.enabled;
}
