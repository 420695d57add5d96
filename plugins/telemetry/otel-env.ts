/**
 * The OpenTelemetry environment variables the plugin honours, as the
 * OpenTelemetry specification defines them:
 *
 * - `OTEL_SERVICE_NAME`: `service.name`, unless `telemetry.service_name` is set;
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: base URL of the collector; the signal's
 *   path (`/v1/traces`, `/v1/metrics`) is appended;
 * - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`:
 *   the full URL for one signal, used as it is;
 * - `OTEL_RESOURCE_ATTRIBUTES`: extra resource attributes (read by the SDK);
 * - `OTEL_EXPORTER_OTLP_HEADERS` and `..._TRACES_HEADERS` / `..._METRICS_HEADERS`:
 *   extra export headers (read by the OTLP exporters; configured headers win).
 *
 * An exporter's `endpoint` in the config file wins over the variables.
 */

import { ConfigError } from '../../src/index.js';
import { DEFAULT_METRICS_PATH, DEFAULT_OTLP_ENDPOINT, DEFAULT_SERVICE_NAME, DEFAULT_TRACES_PATH } from './options.js';

/** One place to export one signal to. */
export interface ExportTarget {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Traces only: longest a span waits in the batch. */
  readonly batchTimeoutMs: number;
}

interface ExporterEntry {
  readonly disabled: boolean;
  readonly endpoint?: string | undefined;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly export_timeout: number;
  readonly batch_timeout?: number;
}

const SIGNAL = {
  traces: { variable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', path: DEFAULT_TRACES_PATH },
  metrics: { variable: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', path: DEFAULT_METRICS_PATH },
} as const;

const DEFAULT_EXPORT_TIMEOUT_MS = 10_000;
const DEFAULT_BATCH_TIMEOUT_MS = 5_000;

/** `service.name`: the config key, else `OTEL_SERVICE_NAME`, else `switchyard`. */
export function resolveServiceName(configured: string | undefined, env: NodeJS.ProcessEnv): string {
  if (configured !== undefined) return configured;
  const fromEnv = env.OTEL_SERVICE_NAME?.trim();
  return fromEnv ? fromEnv : DEFAULT_SERVICE_NAME;
}

/**
 * Where one signal goes. With no exporter configured, one exporter from the
 * environment (or the OpenTelemetry default, `http://localhost:4318`);
 * disabled exporters are left out.
 */
export function exportTargets(signal: 'traces' | 'metrics', exporters: readonly ExporterEntry[], env: NodeJS.ProcessEnv): ExportTarget[] {
  const entries: readonly ExporterEntry[] =
    exporters.length > 0 ? exporters : [{ disabled: false, path: SIGNAL[signal].path, headers: {}, export_timeout: DEFAULT_EXPORT_TIMEOUT_MS }];
  return entries
    .filter((entry) => !entry.disabled)
    .map((entry) => ({
      url: urlOf(signal, entry, env),
      headers: entry.headers,
      timeoutMs: entry.export_timeout,
      batchTimeoutMs: entry.batch_timeout ?? DEFAULT_BATCH_TIMEOUT_MS,
    }));
}

function urlOf(signal: 'traces' | 'metrics', entry: ExporterEntry, env: NodeJS.ProcessEnv): string {
  if (entry.endpoint !== undefined) return join(entry.endpoint, entry.path);
  const { variable } = SIGNAL[signal];
  const full = env[variable]?.trim();
  if (full) return checked(variable, full);
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return join(checked('OTEL_EXPORTER_OTLP_ENDPOINT', base), entry.path);
  return join(DEFAULT_OTLP_ENDPOINT, entry.path);
}

function join(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

function checked(variable: string, value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new ConfigError([{ path: variable, message: 'must be an absolute http or https URL', plugin: 'telemetry' }]);
  }
  return value;
}
