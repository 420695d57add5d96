import type { CommanderError } from 'commander';

/** Exit codes of INTERFACES.md: 0 ok, 1 the work failed, 2 a usage error. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Prints a problem to stderr, one `error:` line per message line; the stack only with LOG_LEVEL=debug. */
export function writeProblem(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  for (const line of message.split('\n')) process.stderr.write(`error: ${line}\n`);
  if (process.env.LOG_LEVEL === 'debug' && error instanceof Error && error.stack) {
    process.stderr.write(`${error.stack}\n`);
  }
}

/** Commander exits 1 on a usage error; INTERFACES.md keeps 1 for failed work and wants 2. */
export function exitForUsageError(error: CommanderError): never {
  process.exit(error.exitCode === 0 ? EXIT_OK : EXIT_USAGE);
}
