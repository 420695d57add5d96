/**
 * The `telemetry` and `access_logs` sections of router.config.yaml, declared
 * once for the config loader and `switchyard router` (their schemas are in
 * `options.ts`). Kept apart from the plugins so reading the config does not
 * load them.
 */
import { defineConfigSection, type SwitchyardPlugin } from '../../src/index.js';
import { accessLogsOptionsSchema, telemetryEnabled, telemetryOptionsSchema } from './options.js';

/** The `telemetry` section: the plugin is on when it turns tracing or OTLP metrics on (off, it costs nothing). */
export const telemetrySection = defineConfigSection({
  key: 'telemetry',
  plugin: 'telemetry',
  schema: telemetryOptionsSchema,
  async fromConfig(section): Promise<SwitchyardPlugin[]> {
    if (!section || !telemetryEnabled(section)) return [];
    const { useTelemetry } = await import('./index.js');
    return [useTelemetry.fromParsed(section)];
  },
});

/** The `access_logs` section: the `access-logs` plugin when `enabled`. */
export const accessLogsSection = defineConfigSection({
  key: 'access_logs',
  plugin: 'access-logs',
  schema: accessLogsOptionsSchema,
  async fromConfig(section): Promise<SwitchyardPlugin[]> {
    if (!section?.enabled) return [];
    const { useAccessLogs } = await import('./index.js');
    return [useAccessLogs.fromParsed(section)];
  },
});
