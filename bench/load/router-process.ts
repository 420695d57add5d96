/**
 * The router under load, as users run it: `switchyard router -c <config>`
 * in its own process (from the sources through tsx), so its memory can be
 * read from /proc and SIGTERM can be sent to it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TSX = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/** A running router process. */
export interface RouterProcess {
  readonly pid: number;
  /** Resident set size now, bytes (undefined once it exited or without /proc). */
  rss(): number | undefined;
  /** Log lines printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code (or signal name) when it exits. */
  readonly exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts the router in `cwd` with `configPath`. */
export function startRouterProcess(cwd: string, configPath: string): RouterProcess {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, 'router', '-c', configPath], {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return {
    pid: child.pid!,
    rss: () => {
      try {
        const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        return kb === undefined ? undefined : Number(kb) * 1024;
      } catch {
        return undefined;
      }
    },
    output: () => text,
    exited,
    kill: (signal) => child.kill(signal),
  };
}

/** Waits until `GET <base>/health/ready` answers 200, or throws after `timeoutMs`. */
export async function waitReady(base: string, router: RouterProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void router.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      if ((await fetch(`${base}/health/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the router did not get ready:\n${router.output()}`);
}
