/**
 * `telemetry`: OpenTelemetry traces and metrics over OTLP (HTTP with protobuf
 * bodies, or gRPC with `exporter: grpc`), from the pipeline's hooks (config
 * key `telemetry`), and `access-logs`: one log line per request (config key
 * `access_logs`). See `docs/telemetry.md`.
 *
 * ```ts
 * import { useAccessLogs, useTelemetry } from 'switchyard/plugins/telemetry';
 * await createRouter({
 *   plugins: [
 *     useTelemetry({ tracing: { enabled: true, sampling_rate: 0.1, exporters: [{ endpoint: 'http://collector:4318' }] } }),
 *     useAccessLogs({ enabled: true }),
 *   ],
 * });
 * ```
 *
 * Put them first in the plugin list: their hooks then see every request,
 * including those another plugin answers, and every fetch, including cache hits.
 */
import { definePlugin, type PluginFactory } from '../../src/index.js';
import { accessLogsSection, telemetrySection } from './config.js';
import { accessLogsOptionsSchema, telemetryEnabled, telemetryOptionsSchema } from './options.js';

export {
  accessLogsOptionsSchema,
  DEFAULT_METRICS_PATH,
  DEFAULT_OTLP_ENDPOINT,
  DEFAULT_OTLP_GRPC_ENDPOINT,
  DEFAULT_SERVICE_NAME,
  DEFAULT_TRACES_PATH,
  telemetryOptionsSchema,
  type AccessLogsOptions,
  type ResolvedAccessLogsOptions,
  type ResolvedTelemetryOptions,
  type TelemetryOptions,
} from './options.js';
export { ACCESS_LOG_MESSAGE, type AccessLogLine } from './access-logs.js';

/** OpenTelemetry traces and metrics; with both signals off it has no hooks and loads no SDK. */
export const useTelemetry: PluginFactory<typeof telemetryOptionsSchema> = definePlugin({
  name: 'telemetry',
  config: telemetrySection,
  options: telemetryOptionsSchema,
  // Reads the response cache's record of each request (hits, misses) when that plugin runs.
  optionalDependsOn: ['response-cache'],
  // OTLP metrics export the router's own metrics (the Prometheus series): the kernel records them even with `metrics.enabled` off.
  needsMetrics: (options) => options.metrics.otlp.enabled,
  async setup(ctx, options) {
    if (!telemetryEnabled(options)) return;
    // The OpenTelemetry SDK loads only when a signal is on.
    const { startTelemetry } = await import('./start-telemetry.js');
    return startTelemetry(ctx, options);
  },
});

/** One JSON log line per request; disabled, it has no hooks. */
export const useAccessLogs: PluginFactory<typeof accessLogsOptionsSchema> = definePlugin({
  name: 'access-logs',
  config: accessLogsSection,
  options: accessLogsOptionsSchema,
  // Reads the response cache's record of each request (hits, misses) when that plugin runs.
  optionalDependsOn: ['response-cache'],
  async setup(ctx, options) {
    if (!options.enabled) return;
    const { accessLogHooks } = await import('./access-logs.js');
    return { hooks: accessLogHooks(ctx.log) };
  },
});

export default useTelemetry;
