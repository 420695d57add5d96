/**
 * Runs a CLI harness (a TypeScript file, through tsx, that starts the CLI
 * with what a test needs in place) to completion in its own process.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** What a run printed and how it ended. */
export interface HarnessRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `harness` with `args` in `cwd`, with exactly `env` as its environment (and `nodeArgs` for node itself, such as `--stack-size`). */
export function runHarness(
  harness: string,
  args: readonly string[],
  { cwd, env, nodeArgs = [] }: { cwd: string; env: NodeJS.ProcessEnv; nodeArgs?: readonly string[] },
): Promise<HarnessRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeArgs, '--import', TSX, harness, ...args], { cwd, env }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}
