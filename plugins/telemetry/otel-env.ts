/**
 * The OpenTelemetry environment variables the plugin honours, as the
 * OpenTelemetry specification defines them:
 *
 * - `OTEL_SERVICE_NAME`: `service.name`, unless `telemetry.service_name` is set;
 * - `OTEL_EXPORTER_OTLP_PROTOCOL` / `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` /
 *   `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`: the protocol of the default exporter
 *   (the one used when the config lists none): `http/protobuf` (the default),
 *   `http/json` or `grpc`; any other value falls back to `http/protobuf`
 *   with a warning, as the OpenTelemetry JS SDK does;
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: base URL of the collector; for OTLP/HTTP the
 *   signal's path (`/v1/traces`, `/v1/metrics`) is appended, for gRPC it is
 *   used as it is;
 * - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`:
 *   the full URL for one signal, used as it is;
 * - `OTEL_RESOURCE_ATTRIBUTES`: extra resource attributes (read by the SDK);
 * - `OTEL_EXPORTER_OTLP_HEADERS` and `..._TRACES_HEADERS` / `..._METRICS_HEADERS`:
 *   extra export headers (read by the OTLP exporters; configured headers win);
 * - `OTEL_EXPORTER_OTLP_COMPRESSION` and `..._TRACES_COMPRESSION` /
 *   `..._METRICS_COMPRESSION`: `gzip` or `none` (read by the OTLP exporters:
 *   the options built here never set a compression, so theirs stands).
 *
 * An exporter's `endpoint` in the config file wins over the variables.
 */

import { ConfigError } from '../../src/index.js';
import { DEFAULT_METRICS_PATH, DEFAULT_OTLP_ENDPOINT, DEFAULT_OTLP_GRPC_ENDPOINT, DEFAULT_SERVICE_NAME, DEFAULT_TRACES_PATH, type ExporterProtocol } from './options.js';

/**
 * How one exporter speaks: a configured `exporter` (`http`, `grpc`), or
 * `http/json`, which only `OTEL_EXPORTER_OTLP_[SIGNAL_]PROTOCOL` selects
 * (Cosmo's config has no name for it).
 */
export type TargetProtocol = ExporterProtocol | 'http/json';

/** One place to export one signal to. */
export interface ExportTarget {
  /** `http`: OTLP/HTTP with protobuf bodies; `http/json`: OTLP/HTTP with JSON bodies; `grpc`: OTLP/gRPC. */
  readonly protocol: TargetProtocol;
  /**
   * `http`, `http/json`: the URL exports are posted to (path included). `grpc`: the
   * collector's address, `http://host:port` (plaintext) or `https://host:port`
   * (TLS). Either may carry `user:password@`, sent as Basic authorization.
   */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Traces only: longest a span waits in the batch. */
  readonly batchTimeoutMs: number;
  /** `grpc` only: a URL path that was written (the `path` key, or a path in the endpoint) and is ignored: gRPC has none. */
  readonly ignoredPath?: string;
  /** The default exporter only: a protocol variable whose value is not supported (OTLP/HTTP with protobuf is used). */
  readonly unsupportedProtocol?: { readonly variable: string; readonly value: string };
}

interface ExporterEntry {
  readonly disabled: boolean;
  readonly exporter?: TargetProtocol;
  readonly endpoint?: string | undefined;
  readonly path?: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly export_timeout: number;
  readonly batch_timeout?: number;
}

const SIGNAL = {
  traces: { endpoint: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', protocol: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', path: DEFAULT_TRACES_PATH },
  metrics: { endpoint: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', protocol: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', path: DEFAULT_METRICS_PATH },
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
 * environment (its protocol from `OTEL_EXPORTER_OTLP_[SIGNAL_]PROTOCOL`, else
 * OTLP/HTTP; its address from the endpoint variables, else the OpenTelemetry
 * default: `http://localhost:4318`, gRPC `http://localhost:4317`); disabled
 * exporters are left out.
 */
export function exportTargets(signal: 'traces' | 'metrics', exporters: readonly ExporterEntry[], env: NodeJS.ProcessEnv): ExportTarget[] {
  const fromEnv = exporters.length > 0 ? undefined : protocolFromEnv(signal, env);
  const entries: readonly ExporterEntry[] = fromEnv ? [{ disabled: false, exporter: fromEnv.protocol, headers: {}, export_timeout: DEFAULT_EXPORT_TIMEOUT_MS }] : exporters;
  return entries
    .filter((entry) => !entry.disabled)
    .map((entry): ExportTarget => {
      const common = {
        headers: entry.headers,
        timeoutMs: entry.export_timeout,
        batchTimeoutMs: entry.batch_timeout ?? DEFAULT_BATCH_TIMEOUT_MS,
        ...(fromEnv?.unsupported ? { unsupportedProtocol: fromEnv.unsupported } : {}),
      };
      if (entry.exporter === 'grpc') return { protocol: 'grpc', ...grpcAddressOf(signal, entry, env), ...common };
      return { protocol: entry.exporter === 'http/json' ? 'http/json' : 'http', url: urlOf(signal, entry, env), ...common };
    });
}

/**
 * The default exporter's protocol, as `OTEL_EXPORTER_OTLP_[SIGNAL_]PROTOCOL`
 * says (the signal's variable wins); a value the router does not speak is
 * reported and OTLP/HTTP with protobuf used.
 */
function protocolFromEnv(signal: 'traces' | 'metrics', env: NodeJS.ProcessEnv): { protocol: TargetProtocol; unsupported?: { variable: string; value: string } } {
  const specific = env[SIGNAL[signal].protocol]?.trim();
  const general = env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim();
  const [variable, value] = specific ? [SIGNAL[signal].protocol, specific] : general ? ['OTEL_EXPORTER_OTLP_PROTOCOL', general] : [undefined, undefined];
  if (variable === undefined || value === undefined) return { protocol: 'http' };
  switch (value.toLowerCase()) {
    case 'grpc':
      return { protocol: 'grpc' };
    case 'http/protobuf':
      return { protocol: 'http' };
    case 'http/json':
      return { protocol: 'http/json' };
    default:
      // Cut: the value comes from the environment and goes into a log line.
      return { protocol: 'http', unsupported: { variable, value: value.slice(0, 64) } };
  }
}

function urlOf(signal: 'traces' | 'metrics', entry: ExporterEntry, env: NodeJS.ProcessEnv): string {
  const path = entry.path ?? SIGNAL[signal].path;
  if (entry.endpoint !== undefined) return join(entry.endpoint, path);
  const variable = SIGNAL[signal].endpoint;
  const full = env[variable]?.trim();
  if (full) return checked(variable, full);
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return join(checked('OTEL_EXPORTER_OTLP_ENDPOINT', base), path);
  return join(DEFAULT_OTLP_ENDPOINT, path);
}

/**
 * A gRPC collector's address: the configured endpoint, else the signal's
 * endpoint variable, else `OTEL_EXPORTER_OTLP_ENDPOINT`, each used as it is
 * (the specification appends no path for gRPC), else `http://localhost:4317`.
 */
function grpcAddressOf(signal: 'traces' | 'metrics', entry: ExporterEntry, env: NodeJS.ProcessEnv): { url: string; ignoredPath?: string } {
  const variable = SIGNAL[signal].endpoint;
  const full = env[variable]?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const address = entry.endpoint ?? (full ? checked(variable, full) : base ? checked('OTEL_EXPORTER_OTLP_ENDPOINT', base) : DEFAULT_OTLP_GRPC_ENDPOINT);
  const { pathname, search } = new URL(address);
  // A query may hold a token: it is named, not shown, in the warning.
  const inUrl = `${pathname === '/' ? '' : pathname}${search === '' ? '' : '?…'}`;
  // The address without path or query (`scheme://[userinfo@]host[:port]`), as written.
  const url = address.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\\]*)[\s\S]*$/, '$1');
  const ignoredPath = entry.path ?? (inUrl === '' ? undefined : inUrl);
  return ignoredPath === undefined ? { url } : { url, ignoredPath };
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
