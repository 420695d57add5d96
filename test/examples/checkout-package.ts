/**
 * This checkout as the `switchyard` package a plugin author installs: dist
 * with type declarations, package.json, templates and docs. After
 * `npm run build` (as scripts/test.sh and CI run it) that is the checkout
 * itself. When its dist is missing or older than a source, the package is
 * built into a folder of its own under the OS temp dir instead (a minute or
 * more, for the declarations), kept per hash of the sources so test files
 * share it. Packages that use it link it as node_modules/switchyard, the way
 * `npm install` links a `file:` dependency.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'tsup';

export const REPO = resolve(import.meta.dirname, '../..');
const INPUTS = ['src', 'plugins', 'templates', 'package.json', 'tsconfig.json'];
const LOCK_STALE_MS = 10 * 60_000;

/** What a built package has; the oldest of them must be newer than every source. */
const OUTPUTS = ['dist/index.js', 'dist/index.d.ts', 'dist/testing/index.js', 'dist/testing/index.d.ts', 'dist/cli/main.js'];

/** The folder of the built package: this checkout when its dist is current, else a build of it. */
export async function builtSwitchyard(): Promise<string> {
  if (await checkoutDistIsCurrent()) return REPO;
  const folder = join(tmpdir(), `switchyard-checkout-${await sourceHash()}`);
  const done = join(folder, '.complete');
  const lock = `${folder}.lock`;
  for (;;) {
    if (existsSync(done)) return folder;
    try {
      await mkdir(lock);
    } catch {
      // Another test file is building this same state: wait for it (or take over a lock left by a killed run).
      const since = await stat(lock).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (since > LOCK_STALE_MS) await rm(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    try {
      if (!existsSync(done)) await buildInto(folder);
      await writeFile(done, new Date().toISOString());
      return folder;
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}

/** Links the built package and the given tools from this checkout's node_modules into `project/node_modules`. */
export async function linkPackages(project: string, switchyard: string, tools: readonly string[]): Promise<void> {
  const modules = join(project, 'node_modules');
  const links: Array<[string, string]> = [['switchyard', switchyard], ...tools.map((tool): [string, string] => [tool, join(REPO, 'node_modules', tool)])];
  for (const [name, target] of links) {
    const at = join(modules, name);
    await mkdir(dirname(at), { recursive: true });
    await rm(at, { recursive: true, force: true });
    await symlink(target, at, 'dir');
  }
}

async function checkoutDistIsCurrent(): Promise<boolean> {
  const built = await Promise.all(
    OUTPUTS.map((output) =>
      stat(join(REPO, output)).then(
        (info) => info.mtimeMs,
        () => 0,
      ),
    ),
  );
  const oldestOutput = Math.min(...built);
  if (oldestOutput === 0) return false;
  for (const file of await sourceFiles()) if ((await stat(file)).mtimeMs > oldestOutput) return false;
  return true;
}

async function sourceFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const input of INPUTS) {
    const path = join(REPO, input);
    if (!(await stat(path)).isDirectory()) files.push(path);
    else for (const entry of await readdir(path, { recursive: true, withFileTypes: true })) if (entry.isFile()) files.push(join(entry.parentPath, entry.name));
  }
  return files.sort();
}

async function buildInto(folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const plugins = (await readdir(join(REPO, 'plugins'), { withFileTypes: true }))
    .filter((entry) => entry.isDirectory() && existsSync(join(REPO, 'plugins', entry.name, 'index.ts')))
    .map((entry) => [`plugins/${entry.name}/index`, join(REPO, 'plugins', entry.name, 'index.ts')]);
  const typed = { index: join(REPO, 'src/index.ts'), 'testing/index': join(REPO, 'src/testing/index.ts'), ...Object.fromEntries(plugins) };
  // The same entries as tsup.config.ts, written to the staging folder instead of dist/.
  await build({
    entry: { ...typed, 'cli/main': join(REPO, 'src/cli/main.ts') },
    outDir: join(folder, 'dist'),
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    splitting: true,
    dts: { entry: typed },
    tsconfig: join(REPO, 'tsconfig.json'),
    silent: true,
    config: false,
  });
  for (const item of ['package.json', 'templates', 'docs']) await cp(join(REPO, item), join(folder, item), { recursive: true });
  // Its dependencies are this checkout's.
  await symlink(join(REPO, 'node_modules'), join(folder, 'node_modules'), 'dir');
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await sourceFiles())
    hash
      .update(relative(REPO, file))
      .update('\0')
      .update(await readFile(file))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}
