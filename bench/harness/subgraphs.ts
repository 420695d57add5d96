/**
 * Starting the benchmark's helper processes (the subgraph server, and any
 * service a scenario adds) and reading their request counters. Each such
 * program reports to its parent over IPC once it listens:
 * `{ type: 'ready', urls: { <name>: url }, control?: url }`; a control
 * listener answers `GET /counts` and `POST /reset`.
 */
import { join } from 'node:path';
import { startProcess, type Started } from './processes.js';

/** A running helper process and the URLs it reported. */
export interface RunningServer {
  readonly process: Started;
  /** What it serves, by name (e.g. subgraph endpoints). */
  readonly urls: Readonly<Record<string, string>>;
  /** Requests each of its endpoints has received since the last reset; `{}` without a control listener. */
  counts(): Promise<Record<string, number>>;
  reset(): Promise<void>;
}

/** The running subgraphs. */
export type RunningSubgraphs = RunningServer;

interface ReadyMessage {
  type: 'ready';
  urls: Record<string, string>;
  control?: string;
}

/** Starts a bench server program and waits until it reports its URLs. */
export async function startServer(options: {
  /** Names the log file (`<name>.log` in `workDir`) and error messages. */
  name: string;
  program: string;
  workDir: string;
  cores?: string;
  env?: Readonly<Record<string, string>>;
}): Promise<RunningServer> {
  const started = startProcess({
    command: process.execPath,
    args: [options.program],
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...options.env },
    cwd: options.workDir,
    cores: options.cores,
    logFile: join(options.workDir, `${options.name}.log`),
    ipc: true,
  });
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.name} did not start within 30s:\n${started.tail()}`)), 30_000);
    started.child.once('message', (message: ReadyMessage) => {
      clearTimeout(timer);
      resolve(message);
    });
    void started.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (${code}):\n${started.tail()}`));
    });
  });
  const control = ready.control;
  return {
    process: started,
    urls: ready.urls,
    counts: async () => (control ? ((await (await fetch(`${control}/counts`)).json()) as Record<string, number>) : {}),
    reset: async () => {
      if (control) await (await fetch(`${control}/reset`, { method: 'POST' })).text();
    },
  };
}

/** Starts the subgraph server program and waits until it reports its URLs. */
export function startSubgraphs(options: {
  program: string;
  workDir: string;
  cores?: string;
  delayMs: number;
  /** `Cache-Control` of every subgraph answer; default none. */
  cacheControl?: string;
  /** Which subgraphs (`BENCH_SUBGRAPH_GRAPH` of servers/subgraph-server.ts); default `federated`. */
  graph?: 'federated' | 'projects';
}): Promise<RunningSubgraphs> {
  return startServer({
    name: 'subgraphs',
    program: options.program,
    workDir: options.workDir,
    cores: options.cores,
    env: {
      BENCH_SUBGRAPH_DELAY_MS: String(options.delayMs),
      ...(options.cacheControl ? { BENCH_SUBGRAPH_CACHE_CONTROL: options.cacheControl } : {}),
      ...(options.graph ? { BENCH_SUBGRAPH_GRAPH: options.graph } : {}),
    },
  });
}

/** All subgraph requests in a counts object. */
export function totalRequests(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}
