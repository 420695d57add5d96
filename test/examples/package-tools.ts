/**
 * Runs a plugin package's own scripts (typecheck, test, build) the way
 * `npm run` would, with the tools linked from this checkout, and reads what
 * its vitest run reported.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './checkout-package.js';

const exec = promisify(execFile);

/** The tools a plugin package's scripts use, as `linkPackages` names them. */
export const PACKAGE_TOOLS = ['tsup', 'vitest', 'typescript', '@types/node'] as const;

const BINARIES = {
  typecheck: ['typescript/bin/tsc', '--noEmit', '-p', '.'],
  build: ['tsup/dist/cli-default.js'],
  test: ['vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', '--outputFile.json=vitest-report.json'],
} as const;

/** One test of the package's own vitest run. */
export interface PackageTest {
  readonly name: string;
  readonly status: string;
}

/** Runs `npm run <script>`'s command in `project`; rejects with the tool's output when it fails. */
export async function runPackageScript(project: string, script: keyof typeof BINARIES): Promise<string> {
  const [binary, ...args] = BINARIES[script];
  // Not our vitest's worker variables: the package's vitest is a run of its own.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_OPTIONS'));
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(REPO, 'node_modules', binary), ...args], { cwd: project, env, maxBuffer: 16 * 1024 * 1024 });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm run ${script} failed in ${project}:\n${stdout}\n${stderr}`);
  }
}

/** The package's tests as its last `test` run reported them. */
export async function packageTestResults(project: string): Promise<PackageTest[]> {
  const report = JSON.parse(await readFile(join(project, 'vitest-report.json'), 'utf8')) as {
    testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }>;
  };
  return report.testResults.flatMap((file) => file.assertionResults.map((test) => ({ name: test.fullName, status: test.status })));
}
