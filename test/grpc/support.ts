/** Helpers of the gRPC tests: `switchyard grpc-service` as a real process (cli-harness.ts), temporary folders, free ports. */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type HarnessRun, runHarness } from '../support/run-harness.js';

const HARNESS = fileURLToPath(new URL('./cli-harness.ts', import.meta.url));

/** What a run printed and how it ended. */
export type Run = HarnessRun;

/** Runs `switchyard <args>` in `cwd` through the harness (cli-harness.ts). */
export function switchyard(args: readonly string[], cwd: string): Promise<Run> {
  return runHarness(HARNESS, args, { cwd, env: { ...process.env, LOG_LEVEL: 'info' } });
}

/** A temporary folder, removed when the test ends. */
export async function tempDir(onTestFinished: (fn: () => Promise<void>) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-grpc-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
