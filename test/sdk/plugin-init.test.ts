/**
 * `switchyard plugin init <dir>`: the package it writes type-checks, passes
 * its own tests and builds against this checkout (linked as `switchyard`,
 * as `npm install` of a `file:` dependency would); bad directories and names
 * are refused.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { builtSwitchyard, linkPackages } from '../examples/checkout-package.js';
import { PACKAGE_TOOLS, packageTestResults, runPackageScript } from '../examples/package-tools.js';

/** This checkout: the switchyard package the CLI runs from. */
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'switchyard-plugin-init-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('switchyard plugin init', () => {
  it('writes a package that type-checks, passes its tests and builds against switchyard', { timeout: 300_000 }, async () => {
    const result = await runCli(['plugin', 'init', 'switchyard-plugin-request-timer'], { cwd: work });
    expect(result).toEqual({
      code: 0,
      stdout: [
        'created plugin package switchyard-plugin-request-timer in switchyard-plugin-request-timer (plugin "request-timer", factory useRequestTimer, 8 files)',
        'next:',
        '  cd switchyard-plugin-request-timer',
        '  npm install',
        '  npm test',
        '  npm run build',
        `its devDependency "switchyard" is this copy (file:${REPO}): the npm registry's "switchyard" is another project's package`,
        'then load it in router.config.yaml: plugins: [{ package: "switchyard-plugin-request-timer", options: {} }] (README.md has the details)',
        '',
      ].join('\n'),
      stderr: '',
    });
    const project = join(work, 'switchyard-plugin-request-timer');
    expect((await readdir(project, { recursive: true })).sort()).toEqual([
      '.gitignore',
      'README.md',
      'package.json',
      'src',
      'src/index.ts',
      'test',
      'test/plugin.test.ts',
      'tsconfig.json',
      'tsup.config.ts',
      'vitest.config.ts',
    ]);
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    const { version } = JSON.parse(await readFile(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(manifest.name).toBe('switchyard-plugin-request-timer');
    expect(manifest.peerDependencies).toEqual({ switchyard: `^${version}` });
    // Optional: npm 7+ installs a missing peer from the registry, where "switchyard" is an unrelated package.
    expect(manifest.peerDependenciesMeta).toEqual({ switchyard: { optional: true } });
    // Never a version range: the npm registry's "switchyard" is an unrelated package.
    expect(manifest.devDependencies).toMatchObject({ switchyard: `file:${REPO}`, tsup: expect.any(String), vitest: expect.any(String) });
    expect(manifest.scripts).toMatchObject({ build: 'tsup', test: 'vitest run', typecheck: 'tsc --noEmit' });
    const source = await readFile(join(project, 'src/index.ts'), 'utf8');
    expect(source).toContain("name: 'request-timer'");
    expect(source).toContain('export const useRequestTimer = definePlugin({');
    expect(source).not.toMatch(/__[A-Z_]+__/);

    await linkPackages(project, await builtSwitchyard(), PACKAGE_TOOLS);
    await runPackageScript(project, 'typecheck');
    await runPackageScript(project, 'test');
    expect(await packageTestResults(project)).toEqual([
      { name: 'request-timer adds the response time header and leaves the answer as it was', status: 'passed' },
      { name: 'request-timer uses the header named in its options', status: 'passed' },
      { name: 'request-timer refuses bad options with the plugin and key named', status: 'passed' },
    ]);
    await runPackageScript(project, 'build');
    expect((await readdir(join(project, 'dist'))).sort()).toEqual(['index.d.ts', 'index.js', 'index.js.map']);
  });

  it('refuses a directory that is not empty, or a file, with exit code 1', async () => {
    const taken = join(work, 'taken');
    await mkdir(taken, { recursive: true });
    await writeFile(join(taken, 'notes.txt'), 'mine\n');
    expect(await runCli(['plugin', 'init', taken], { cwd: work })).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: ${taken} is not empty; choose an empty or new directory\n`,
    });
    expect(await readdir(taken)).toEqual(['notes.txt']);
    const file = join(taken, 'notes.txt');
    expect(await runCli(['plugin', 'init', file], { cwd: work })).toMatchObject({ code: 1, stderr: `error: ${file} exists and is not a directory\n` });
  });

  it('refuses a directory name that cannot be a package name, or leaves no plugin name, with exit code 1', async () => {
    expect(await runCli(['plugin', 'init', 'My Plugin'], { cwd: work })).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: "My Plugin" is not a valid package name: the directory name becomes the npm package name, so use lower-case letters, digits, "-", "." and "_", starting with a letter or digit\n',
    });
    expect(await runCli(['plugin', 'init', 'switchyard-plugin-'], { cwd: work })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: "switchyard-plugin-" leaves no plugin name after "switchyard-plugin-"; add one, for example switchyard-plugin-rate-limit\n',
    });
    expect(await readdir(work)).not.toContain('My Plugin');
  });

  it('answers a missing or extra argument with usage and exit code 2', async () => {
    const missing = await runCli(['plugin', 'init'], { cwd: work });
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, "error: missing required argument 'dir'"]);
    const extra = await runCli(['plugin', 'init', 'a', 'b'], { cwd: work });
    expect([extra.code, extra.stderr.split('\n')[0]]).toEqual([2, "error: too many arguments for 'init'. Expected 1 argument but got 2."]);
    expect(await readdir(work)).not.toContain('a');
  });
});
