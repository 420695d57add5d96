/**
 * Runs the real `wgc` CLI (npm `wgc`, a dev dependency) offline: telemetry and
 * the update check off. package.json's `overrides` give wgc the project's
 * graphql: wgc pins an older one, and two graphql copies in one process make
 * `wgc router compose` fail ("from another module or realm").
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const WGC = require.resolve('wgc/dist/src/index.js');

/** What a wgc run printed and how it ended. */
export interface WgcRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `wgc <args>` in `cwd`, with no network use (no token, no telemetry, no update check). */
export function wgc(args: readonly string[], cwd: string): Promise<WgcRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [WGC, ...args],
      {
        cwd,
        env: { ...process.env, COSMO_TELEMETRY_DISABLED: 'true', DO_NOT_TRACK: '1', DISABLE_UPDATE_CHECK: 'true', COSMO_API_KEY: '' },
        timeout: 120_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `wgc router compose -i <input> -o <output>`; throws with wgc's output when it fails. */
export async function wgcRouterCompose(input: string, output: string, cwd: string): Promise<void> {
  const run = await wgc(['router', 'compose', '-i', input, '-o', output], cwd);
  if (run.code !== 0 || !/successfully written/.test(run.stdout)) {
    throw new Error(`wgc router compose failed (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}
