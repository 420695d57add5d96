/**
 * Child processes of the benchmark: started pinned to CPU cores with
 * `taskset` when available (it execs the program, so the pid we hold is the
 * program's own), with output going to a log file, stopped by pid.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';

/** Where processes run. */
export interface Pinning {
  /** True when `taskset` is used. */
  readonly enabled: boolean;
  /** Core list for the contender (`taskset -c`), e.g. `0`. */
  readonly contenderCores: string;
  /** Core list for the subgraphs and the load generator, e.g. `1`. */
  readonly loadCores: string;
  /** Every core, e.g. `0-1`: children inherit this process's pinning, so an unpinned contender is given all of them. */
  readonly allCores: string;
  /** Why pinning is off, when it is. */
  readonly reason?: string;
}

/**
 * Pins the contender to core 0 and the rest to core 1 when `taskset` exists
 * and there are at least 2 cores; pins this process (the load generator) now.
 */
export function setUpPinning(wanted: boolean): Pinning {
  const off = (reason: string): Pinning => ({ enabled: false, contenderCores: '', loadCores: '', allCores: '', reason });
  if (!wanted) return off('disabled with --no-pin');
  if (availableParallelism() < 2) return off('fewer than 2 cores');
  if (spawnSync('taskset', ['-V']).error) return off('taskset not found (apt-get install util-linux)');
  const pinned = spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)]);
  if (pinned.status !== 0) return off(`taskset failed: ${pinned.stderr.toString().trim()}`);
  return { enabled: true, contenderCores: '0', loadCores: '1', allCores: `0-${availableParallelism() - 1}` };
}

/** Moves running processes (every thread) to `cores`, a `taskset -c` core list. */
export function repin(pids: readonly number[], cores: string): void {
  for (const pid of pids) {
    const moved = spawnSync('taskset', ['-a', '-cp', cores, String(pid)]);
    // A process that just exited has nothing left to move.
    if (moved.status !== 0 && !moved.stderr.toString().includes('No such process')) throw new Error(`taskset -a -cp ${cores} ${pid} failed: ${moved.stderr.toString().trim()}`);
  }
}

/** A started child process. */
export interface Started {
  readonly pid: number;
  readonly child: ChildProcess;
  /** The log file holding its stdout and stderr. */
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) once it exits. */
  readonly exited: Promise<number | string>;
  /** Last lines of its output, for error messages. */
  tail(lines?: number): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** What to start. */
export interface StartOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** `taskset -c` core list; none: not pinned. */
  readonly cores?: string;
  readonly logFile: string;
  /** Open an IPC channel (the child can `process.send`). Default: false. */
  readonly ipc?: boolean;
}

const live = new Set<Started>();

export function startProcess(options: StartOptions): Started {
  const out = openSync(options.logFile, 'w');
  const [command, args] = options.cores ? ['taskset', ['-c', options.cores, options.command, ...options.args]] : [options.command, options.args];
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: options.ipc ? ['ignore', out, out, 'ipc'] : ['ignore', out, out],
  });
  closeSync(out);
  if (child.pid === undefined) throw new Error(`could not start ${options.command}`);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const started: Started = {
    pid: child.pid,
    child,
    logFile: options.logFile,
    exited,
    tail: (lines = 20) => {
      try {
        return readFileSync(options.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    stop: async (graceMs = 5000) => {
      live.delete(started);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  live.add(started);
  void exited.then(() => live.delete(started));
  return started;
}

/** Kills every child still running (on an abort of the benchmark). */
export function killAll(): void {
  for (const started of live) started.child.kill('SIGKILL');
  live.clear();
}

/** A port that was free a moment ago on 127.0.0.1 (for programs that need a port up front). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs a program to its end (pinned like `startProcess`) and resolves with
 * its output; rejects when it exits with a failure or outlives `timeoutMs`.
 */
export async function runToEnd(options: StartOptions & { readonly timeoutMs: number }): Promise<string> {
  const started = startProcess(options);
  const timer = setTimeout(() => void started.stop(), options.timeoutMs);
  const code = await started.exited;
  clearTimeout(timer);
  const output = readFileSync(options.logFile, 'utf8');
  if (code !== 0) throw new Error(`${options.command} exited (${code}):\n${started.tail()}`);
  return output;
}
