/**
 * Builds and packs this checkout as the `switchyard` npm package, the way it
 * would be published (dist + templates + docs), so a generated project can
 * install it with npm instead of from the registry.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'tsup';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');

/** Builds `dist` into a staging folder under `workDir` and packs it; returns the tarball's path. */
export async function packLocalSwitchyard(workDir: string): Promise<string> {
  const staging = join(workDir, 'switchyard-package');
  await mkdir(staging, { recursive: true });
  const plugins = (await readdir(join(REPO, 'plugins'), { withFileTypes: true })).filter((entry) => entry.isDirectory());
  await build({
    entry: {
      index: join(REPO, 'src/index.ts'),
      'testing/index': join(REPO, 'src/testing/index.ts'),
      'cli/main': join(REPO, 'src/cli/main.ts'),
      ...Object.fromEntries(plugins.map((entry) => [`plugins/${entry.name}/index`, join(REPO, 'plugins', entry.name, 'index.ts')])),
    },
    outDir: join(staging, 'dist'),
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    splitting: true,
    dts: false,
    silent: true,
    config: false,
  });
  for (const item of ['package.json', 'templates', 'docs']) await cp(join(REPO, item), join(staging, item), { recursive: true });
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', workDir], { cwd: staging });
  return join(workDir, stdout.trim().split('\n').at(-1)!);
}
