/**
 * The command line of `npm run load`, read without starting anything (and
 * without importing the router), so a bad argument fails at once.
 */
import { parseArgs } from 'node:util';

export const USAGE = 'usage: npm run load -- [--duration <seconds, default 60>] [--connections <n, default 256>] [--no-hostile] [--replicas <n, default 1>]';

/** What a run does. */
export interface LoadArgs {
  /** Seconds of load, at least 5. */
  readonly seconds: number;
  /** Valid connections, at least 8 (as many hostile ones beside them unless `hostile` is false). */
  readonly connections: number;
  readonly hostile: boolean;
  /** Router processes, 1 to 8; above 1 the multi-replica run (replicas.ts). */
  readonly replicas: number;
}

/** The arguments, `help`, or what is wrong with them (the usage included). */
export function readLoadArgs(argv: readonly string[]): LoadArgs | { readonly help: true } | { readonly error: string } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        duration: { type: 'string', default: '60' },
        connections: { type: 'string', default: '256' },
        'no-hostile': { type: 'boolean', default: false },
        replicas: { type: 'string', default: '1' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    return { error: `${error instanceof Error ? error.message : String(error)}\n${USAGE}` };
  }
  if (values.help) return { help: true };
  const seconds = Number(values.duration);
  const connections = Number(values.connections);
  if (!Number.isInteger(seconds) || seconds < 5 || !Number.isInteger(connections) || connections < 8) {
    return { error: `--duration must be a whole number of seconds >= 5 and --connections a whole number >= 8\n${USAGE}` };
  }
  const replicas = Number(values.replicas);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 8) return { error: `--replicas must be a whole number from 1 to 8\n${USAGE}` };
  return { seconds, connections, hostile: !values['no-hostile'], replicas };
}
