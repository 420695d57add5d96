/**
 * How `plugins: [{ package, options }]` in router.config.yaml finds its
 * packages: installed next to the config file (or above it), ESM-only or
 * not, and what startup says when a package is missing or is no plugin.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { loadRouterSetup } from '../../src/setup/index.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchyard-plugin-packages-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A package under `<folder>/node_modules/<name>`; its default export has the shape definePlugin gives. */
async function installPackage(folder: string, name: string, manifest: Record<string, unknown>, entryFile: string, entry?: string): Promise<void> {
  const dir = join(folder, 'node_modules', name);
  await mkdir(join(dir, 'dist'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, type: 'module', ...manifest }));
  const plugin = `export default { configure: (options) => ({ name: ${JSON.stringify(name.replace(/^@[^/]+\//, ''))}, setup: () => ({}), options }) };\n`;
  await writeFile(join(dir, entryFile), entry ?? plugin);
}

async function setupWith(folder: string, plugins: string): Promise<string[]> {
  const configPath = join(folder, 'router.config.yaml');
  await writeFile(configPath, `version: "1"\nplugins:\n${plugins}`);
  const setup = await loadRouterSetup({ configPath, env: {} });
  return setup.plugins.map((plugin) => plugin.name);
}

async function problemsOf(folder: string, plugins: string): Promise<unknown> {
  return setupWith(folder, plugins).then(
    () => 'no error',
    (error: unknown) => (error instanceof ConfigError ? error.issues : error),
  );
}

describe('plugin packages named in router.config.yaml', () => {
  it('loads ESM-only packages (exports with only an import condition), CommonJS-resolvable ones and scoped ones', async () => {
    const folder = join(root, 'kinds');
    await installPackage(folder, 'esm-only', { exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } } }, 'dist/index.js');
    await installPackage(folder, 'with-main', { main: 'dist/main.js' }, 'dist/main.js');
    await installPackage(folder, '@acme/scoped', { exports: './dist/index.js' }, 'dist/index.js');
    expect(await setupWith(folder, '  - package: esm-only\n  - package: with-main\n  - package: "@acme/scoped"\n')).toEqual(['esm-only', 'with-main', 'scoped']);
  });

  it('finds a package installed in a folder above the config file', async () => {
    await installPackage(root, 'from-above', { exports: { '.': { import: './dist/index.js' } } }, 'dist/index.js');
    const nested = join(root, 'configs', 'staging');
    await mkdir(nested, { recursive: true });
    expect(await setupWith(nested, '  - package: from-above\n')).toEqual(['from-above']);
  });

  it('stops startup naming the entry when a package is not installed', async () => {
    const folder = join(root, 'missing');
    await mkdir(folder, { recursive: true });
    expect(await problemsOf(folder, '  - package: switchyard-plugin-nowhere\n')).toEqual([
      { path: 'plugins[0].package', message: 'cannot find package "switchyard-plugin-nowhere" (install it next to the config file)' },
    ]);
  });

  it('stops startup when a package has no default export made with definePlugin()', async () => {
    const folder = join(root, 'not-plugins');
    await installPackage(folder, 'just-a-library', { exports: { '.': { import: './dist/index.js' } } }, 'dist/index.js', 'export const answer = 42;\n');
    await installPackage(folder, 'plain-object', { exports: { '.': { import: './dist/index.js' } } }, 'dist/index.js', 'export default { name: "plain" };\n');
    expect(await problemsOf(folder, '  - package: just-a-library\n')).toEqual([
      { path: 'plugins[0].package', message: '"just-a-library" has no default export made with definePlugin()' },
    ]);
    expect(await problemsOf(folder, '  - package: plain-object\n')).toEqual([
      { path: 'plugins[0].package', message: '"plain-object" has no default export made with definePlugin()' },
    ]);
  });
});
