/** A logger for tests that read what the router logged. */
import { createLogger, type Logger } from '../../src/index.js';

/** A logger at `level` and up that keeps each line it writes, parsed. */
export function captureLogs(level = 'debug'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level,
    destination: {
      write(text: string) {
        for (const line of text.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  return { logger, lines };
}
