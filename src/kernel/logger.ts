import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/** The logger plugins receive: pino's, carrying `{ plugin: name }` for plugins. */
export type Logger = Pick<PinoLogger, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'child' | 'level' | 'isLevelEnabled'>;

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** `trace` ... `fatal`, or `silent`. Default: `info` (or `LOG_LEVEL`). */
  readonly level?: string;
  /** Where lines go. Default: standard output. */
  readonly destination?: DestinationStream;
}

/**
 * One JSON object per line: `level` (as a word), `time` (epoch ms), `msg`,
 * plus `plugin` when a plugin logs. Keys that commonly hold secrets are
 * redacted wherever they appear in logged objects.
 */
export function createLogger({ level = process.env.LOG_LEVEL ?? 'info', destination }: LoggerOptions = {}): Logger {
  const options = {
    level,
    base: undefined,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: {
      paths: ['shared_key', '*.shared_key', 'password', '*.password', 'authorization', '*.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
