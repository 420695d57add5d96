/** Starting the benchmark subgraph process and reading its request counters. */
import { join } from 'node:path';
import { startProcess, type Started } from './processes.js';

/** The running subgraphs. */
export interface RunningSubgraphs {
  readonly process: Started;
  /** GraphQL endpoint of each subgraph, by name. */
  readonly urls: Readonly<Record<string, string>>;
  /** Requests each subgraph has received since the last reset. */
  counts(): Promise<Record<string, number>>;
  reset(): Promise<void>;
}

interface ReadyMessage {
  type: 'ready';
  urls: Record<string, string>;
  control: string;
}

/** Starts the subgraph server program and waits until it reports its URLs. */
export async function startSubgraphs(options: {
  program: string;
  workDir: string;
  cores?: string;
  delayMs: number;
  /** `Cache-Control` of every subgraph answer; default none. */
  cacheControl?: string;
}): Promise<RunningSubgraphs> {
  const started = startProcess({
    command: process.execPath,
    args: [options.program],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      BENCH_SUBGRAPH_DELAY_MS: String(options.delayMs),
      ...(options.cacheControl ? { BENCH_SUBGRAPH_CACHE_CONTROL: options.cacheControl } : {}),
    },
    cwd: options.workDir,
    cores: options.cores,
    logFile: join(options.workDir, 'subgraphs.log'),
    ipc: true,
  });
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`subgraphs did not start within 30s:\n${started.tail()}`)), 30_000);
    started.child.once('message', (message: ReadyMessage) => {
      clearTimeout(timer);
      resolve(message);
    });
    void started.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`subgraphs exited (${code}):\n${started.tail()}`));
    });
  });
  return {
    process: started,
    urls: ready.urls,
    counts: async () => (await (await fetch(`${ready.control}/counts`)).json()) as Record<string, number>,
    reset: async () => {
      await (await fetch(`${ready.control}/reset`, { method: 'POST' })).text();
    },
  };
}

/** All subgraph requests in a counts object. */
export function totalRequests(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}
