import type { LoadedConfig, SwitchyardPlugin } from '../../src/index.js';
import { useAccessLogs, useTelemetry } from './index.js';
import { telemetryEnabled, type ResolvedAccessLogsOptions, type ResolvedTelemetryOptions } from './options.js';

/** The `telemetry` plugin when the section turns tracing or OTLP metrics on; none otherwise (it costs nothing). */
export function telemetryPlugins(config: LoadedConfig): SwitchyardPlugin[] {
  // Safe: the section was validated with telemetryOptionsSchema when the config was loaded.
  const section = config.sections.telemetry as ResolvedTelemetryOptions | undefined;
  if (!section || !telemetryEnabled(section)) return [];
  return [useTelemetry.fromParsed(section)];
}

/** The `access-logs` plugin when `access_logs.enabled` is true; none otherwise. */
export function accessLogsPlugins(config: LoadedConfig): SwitchyardPlugin[] {
  const section = config.sections.access_logs as ResolvedAccessLogsOptions | undefined;
  return section?.enabled ? [useAccessLogs.fromParsed(section)] : [];
}
