import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as PinoLogger, type LoggerOptions as PinoOptions } from 'pino';
import { terminalSafeStream } from './terminal-escape.js';

/** The logger plugins receive: pino's, carrying `{ plugin: name }` for plugins. */
export type Logger = Pick<PinoLogger, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'child' | 'level' | 'isLevelEnabled'>;

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** `trace` ... `fatal`, or `silent`. Default: `info` (or `LOG_LEVEL`). */
  readonly level?: string;
  /** Where lines go. Default: standard output. */
  readonly destination?: DestinationStream;
  /**
   * Human-readable, coloured lines (pino-pretty) instead of JSON. Default:
   * when lines go to standard output and it is a terminal.
   */
  readonly pretty?: boolean;
}

/**
 * One JSON object per line: `level` (as a word), `time` (epoch ms), `msg`,
 * plus `plugin` when a plugin logs, and `worker` (node:cluster's worker id,
 * from 1) in a worker of `switchyard router --workers`. Keys that commonly
 * hold secrets are redacted wherever they appear in logged objects. On a terminal the same
 * lines are printed for people instead: time, coloured level, message, then
 * the other fields.
 */
export function createLogger({ level = process.env.LOG_LEVEL ?? 'info', destination, pretty = !destination && process.stdout.isTTY === true }: LoggerOptions = {}): Logger {
  const options: PinoOptions = {
    level,
    // No pid or hostname; a cluster worker's lines say which worker wrote them.
    base: cluster.isWorker && cluster.worker ? { worker: cluster.worker.id } : undefined,
    redact: {
      paths: ['shared_key', '*.shared_key', 'password', '*.password', 'authorization', '*.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
  };
  // pino-pretty reads pino's numeric levels; JSON lines carry the level as a word.
  if (pretty) return pino(options, prettyStream(destination));
  options.formatters = { level: (label: string) => ({ level: label }) };
  return destination ? pino(options, destination) : pino(options);
}

/** pino-pretty, loaded only for a terminal; synchronous, so a line is on screen before the process exits. */
function prettyStream(destination: DestinationStream | undefined): DestinationStream {
  const require = createRequire(import.meta.url);
  const pinoPretty = require('pino-pretty') as typeof import('pino-pretty');
  // Colours unless NO_COLOR is set or TERM is dumb (pino-pretty's default).
  return pinoPretty.build({
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    // C1 controls and U+2028/2029 from clients escaped before they reach the terminal (terminal-escape.ts).
    destination: terminalSafeStream(destination ?? pino.destination({ dest: 1, sync: true })),
  });
}
