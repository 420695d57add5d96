/**
 * OTLP/gRPC exporters (`exporter: grpc`), the OpenTelemetry packages made for
 * it. Loaded by start-telemetry.ts only when an exporter uses gRPC: loading
 * @grpc/grpc-js and the two exporters takes a few hundred milliseconds that a
 * router exporting over HTTP does not need to pay.
 */

import { credentials, Metadata } from '@grpc/grpc-js';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/** What one gRPC exporter needs: the collector's address without credentials, the metadata to send, the timeout of one export. */
export interface GrpcExporterOptions {
  /** `http://host:port` (plaintext) or `https://host:port` (TLS with the system's roots); a path is ignored. */
  readonly url: string;
  /** Sent as gRPC metadata with every export (keys lower-cased). */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMillis: number;
}

function exporterConfig(options: GrpcExporterOptions): { url: string; metadata: Metadata; timeoutMillis: number; credentials: ReturnType<typeof credentials.createInsecure> } {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(options.headers)) metadata.set(name, value);
  return {
    url: options.url,
    metadata,
    timeoutMillis: options.timeoutMillis,
    // Decided by the scheme alone, so no OTEL_EXPORTER_OTLP_INSECURE or certificate file changes it behind the config's back.
    credentials: new URL(options.url).protocol === 'https:' ? credentials.createSsl() : credentials.createInsecure(),
  };
}

/** A span exporter sending `TraceService/Export` calls. */
export function grpcSpanExporter(options: GrpcExporterOptions): SpanExporter {
  return new OTLPTraceExporter(exporterConfig(options));
}

/** A metric exporter sending `MetricsService/Export` calls (cumulative temporality, as over HTTP). */
export function grpcMetricExporter(options: GrpcExporterOptions): PushMetricExporter {
  return new OTLPMetricExporter(exporterConfig(options));
}
