import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
// Absolute, so the CLI can run from any working directory.
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/** Result of a finished CLI run. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The built CLI to run instead of the sources, when set (scripts/test.sh
 * builds first and sets it): each start then skips seconds of TypeScript
 * loading. Run by hand, tests use the sources so they never see a stale build.
 */
const built = process.env.SWITCHYARD_TEST_CLI ? resolve(root, process.env.SWITCHYARD_TEST_CLI) : undefined;

/** Starts `switchyard <args>` from the sources (through tsx), or from the build named by `SWITCHYARD_TEST_CLI`. */
export function spawnCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess & { output(): CliResult; exited: Promise<CliResult> } {
  const child = spawn(process.execPath, built ? [built, ...args] : ['--import', tsx, main, ...args], {
    cwd: options.cwd ?? root,
    env: { ...process.env, LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const output = () => ({ code: child.exitCode, stdout, stderr });
  const exited = new Promise<CliResult>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return Object.assign(child, { output, exited });
}

/** Runs `switchyard <args>` to completion. */
export function runCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return spawnCli(args, options).exited;
}

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Waits until `probe` resolves true (polling), or throws after `timeoutMs`. */
export async function waitFor(probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('timed out waiting');
}
