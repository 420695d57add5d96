import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layering the architecture page promises (docs/architecture.md), checked
 * on every import of every source file: the kernel knows nothing of plugins
 * or the CLI, the SDK entry does not reach into the CLI, and a plugin reaches
 * the rest of the package only through the public SDK, the declared public
 * subpaths, and the plugins it declares in `dependsOn`.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };

/** Source files under `dir`, tests and declaration files left out. */
function sources(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) found.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** Every module specifier a file imports or re-exports, static and dynamic. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  return info.importedFiles.map((entry) => entry.fileName);
}

/** A relative specifier as a repository path (`.js` written for `.ts`), or undefined for a package. */
function target(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return relative(root, resolve(root, dirname(file), specifier))
    .split(sep)
    .join('/')
    .replace(/\.js$/, '.ts');
}

/** `switchyard/<subpath>` → the source file it stands for, from package.json's exports. */
function publicSubpathSource(subpath: string): string | undefined {
  if (subpath === '.') return 'src/index.ts';
  if (subpath.startsWith('./plugins/') || subpath === './package.json') return undefined; // plugins are checked against dependsOn
  if (!(subpath in pkg.exports)) return undefined;
  return `src/${subpath.slice(2)}/index.ts`;
}

const publicModules = new Set(
  Object.keys(pkg.exports)
    .map(publicSubpathSource)
    .filter((path): path is string => path !== undefined),
);
const plugins = readdirSync(join(root, 'plugins')).filter((name) => statSync(join(root, 'plugins', name)).isDirectory());

/** The plugin names a plugin's index declares in `dependsOn` and `optionalDependsOn`. */
function declaredDependencies(plugin: string): string[] {
  const index = readFileSync(join(root, 'plugins', plugin, 'index.ts'), 'utf8');
  const lists = [...index.matchAll(/(?:dependsOn|optionalDependsOn):\s*\[([^\]]*)\]/g)].map((match) => match[1]!);
  return lists.flatMap((list) => [...list.matchAll(/'([a-z0-9-]+)'/g)].map((match) => match[1]!));
}

describe('module boundaries', () => {
  it('the kernel imports neither plugins nor the CLI', () => {
    const crossings = sources('src/kernel').flatMap((file) =>
      importsOf(file)
        .filter((specifier) => /^(plugins|src\/cli)\//.test(target(file, specifier) ?? '') || /^switchyard\/plugins\//.test(specifier))
        .map((specifier) => `${file} → ${specifier}`),
    );
    expect(crossings).toEqual([]);
  });

  it('the SDK entry does not reach into the CLI (whose built-in plugin list imports the SDK)', () => {
    const reach = new Set<string>();
    const visit = (file: string): void => {
      if (reach.has(file)) return;
      reach.add(file);
      for (const specifier of importsOf(file)) {
        const path = target(file, specifier);
        if (path?.startsWith('src/')) visit(path);
      }
    };
    visit('src/index.ts');
    expect([...reach].filter((file) => file.startsWith('src/cli/'))).toEqual([]);
  });

  it('declares the subpaths plugins may use, and each exists', () => {
    expect([...publicModules].sort()).toEqual([
      'src/connect/index.ts',
      'src/grpc/index.ts',
      'src/index.ts',
      'src/operations/index.ts',
      'src/setup/index.ts',
      'src/testing/index.ts',
    ]);
    for (const path of publicModules) expect(statSync(join(root, path)).isFile()).toBe(true);
  });

  it.each(plugins)('plugins/%s reaches the package only through the SDK, public subpaths and the plugins it declares', (plugin) => {
    const allowedPlugins = new Set([plugin, ...declaredDependencies(plugin)]);
    const crossings = sources(`plugins/${plugin}`).flatMap((file) =>
      importsOf(file)
        .filter((specifier) => {
          if (specifier === 'switchyard') return false;
          const pluginImport = /^switchyard\/plugins\/([a-z0-9-]+)$/.exec(specifier);
          if (pluginImport) return !allowedPlugins.has(pluginImport[1]!);
          if (specifier.startsWith('switchyard/'))
            return specifier === 'switchyard/testing' || specifier === 'switchyard/setup' || publicSubpathSource(`./${specifier.slice('switchyard/'.length)}`) === undefined;
          const path = target(file, specifier);
          if (path === undefined) return false; // an npm package or a node: builtin
          if (path.startsWith(`plugins/${plugin}/`)) return false;
          const other = /^plugins\/([a-z0-9-]+)\/index\.ts$/.exec(path);
          if (other) return !allowedPlugins.has(other[1]!);
          // The testing helpers are for tests, and setup loads every built-in plugin: neither is for a plugin's code.
          return !publicModules.has(path) || path === 'src/testing/index.ts' || path === 'src/setup/index.ts';
        })
        .map((specifier) => `${file} → ${specifier}`),
    );
    expect(crossings, `plugins/${plugin}`).toEqual([]);
  });
});
