/**
 * `switchyard plugin init <dir>`: scaffolds a third-party plugin package from
 * `templates/plugin`: `switchyard` as a peer dependency, a tsup build, a
 * vitest test on the testing kit, a README (docs/plugins.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { switchyardDependency } from '../../grpc/templates.js';
import { EXIT_FAILED, exitForUsageError, writeProblem } from '../cli-support.js';

/** What `initPluginPackage` wrote. */
export interface PluginPackage {
  /** Absolute path of the package. */
  readonly directory: string;
  /** npm package name (from the directory name). */
  readonly packageName: string;
  /** The plugin's `name` (kebab-case; the package name without `switchyard-plugin-`). */
  readonly pluginName: string;
  /** The factory it exports (`use<PluginName>`). */
  readonly factoryName: string;
  /** Files written, relative to the package, sorted. */
  readonly files: readonly string[];
  /** The switchyard package the CLI runs from, which the package's devDependency names. */
  readonly switchyardFolder: string;
}

/** The user's directory cannot take the package (exit 1, not a crash). */
export class PluginInitRefused extends Error {
  override readonly name = 'PluginInitRefused';
}

/** Writes the plugin template into `directory` (created when missing; refused when not empty). */
export async function initPluginPackage(directory: string): Promise<PluginPackage> {
  const target = resolve(directory);
  const packageName = packageNameOf(target);
  const pluginName = pluginNameOf(packageName);
  const info = await stat(target).catch(() => undefined);
  if (info && !info.isDirectory()) throw new PluginInitRefused(`${target} exists and is not a directory`);
  if (info && (await readdir(target)).length > 0) throw new PluginInitRefused(`${target} is not empty; choose an empty or new directory`);
  const { templates, version, folder } = installedPackage();
  const factoryName = `use${pluginName.replace(/(^|-)([a-z0-9])/g, (_, __, letter: string) => letter.toUpperCase())}`;
  const values: Record<string, string> = {
    __PACKAGE_NAME__: packageName,
    __PLUGIN_NAME__: pluginName,
    __FACTORY_NAME__: factoryName,
    __SWITCHYARD_VERSION__: version,
    // Only ever inside a JSON string (package.json): escaped as one.
    __SWITCHYARD_DEPENDENCY__: JSON.stringify(switchyardDependency(folder)).slice(1, -1),
  };
  const source = join(templates, 'plugin');
  const files: string[] = [];
  for (const entry of await readdir(source, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = relative(source, join(entry.parentPath, entry.name));
    // npm drops `.gitignore` from published packages, so the template keeps it without the dot.
    const to = join(target, basename(file) === 'gitignore' ? join(dirname(file), '.gitignore') : file);
    const text = await readFile(join(source, file), 'utf8');
    await mkdir(dirname(to), { recursive: true });
    await writeFile(
      to,
      text.replace(/__[A-Z_]+__/g, (placeholder) => values[placeholder] ?? placeholder),
    );
    files.push(relative(target, to));
  }
  return { directory: target, packageName, pluginName, factoryName, files: files.sort(), switchyardFolder: folder };
}

/** The templates folder, version and folder of this switchyard package, from source or from dist. */
function installedPackage(): { templates: string; version: string; folder: string } {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'templates', 'plugin'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error('cannot find the plugin template (templates/plugin) in the switchyard package');
    folder = parent;
  }
  const { version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version: string };
  return { templates: join(folder, 'templates'), version, folder };
}

/** The directory name, which becomes the npm package name: refused unless npm would take it as it is. */
function packageNameOf(directory: string): string {
  const name = basename(directory);
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name) || name.length > 214) {
    throw new PluginInitRefused(
      `"${name}" is not a valid package name: the directory name becomes the npm package name, so use lower-case letters, digits, "-", "." and "_", starting with a letter or digit`,
    );
  }
  if (name === 'switchyard' || name === 'node_modules') throw new PluginInitRefused(`"${name}" cannot be a plugin's package name; choose another directory name`);
  return name;
}

/** The plugin's kebab-case `name`: the package name without the `switchyard-plugin-` prefix. */
function pluginNameOf(packageName: string): string {
  const name = packageName
    .replace(/^switchyard-plugin-/, '')
    .replace(/[._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (name === '') throw new PluginInitRefused(`"${packageName}" leaves no plugin name after "switchyard-plugin-"; add one, for example switchyard-plugin-rate-limit`);
  return name;
}

async function runInit(directory: string): Promise<void> {
  try {
    const created = await initPluginPackage(directory);
    const where = relative(process.cwd(), created.directory) || '.';
    process.stdout.write(
      `created plugin package ${created.packageName} in ${where} (plugin "${created.pluginName}", factory ${created.factoryName}, ${created.files.length} files)\n` +
        `next:\n  cd ${where}\n  npm install\n  npm test\n  npm run build\n` +
        `its devDependency "switchyard" is this copy (${switchyardDependency(created.switchyardFolder)}): the npm registry's "switchyard" is another project's package\n` +
        `then load it in router.config.yaml: plugins: [{ package: "${created.packageName}", options: {} }] (README.md has the details)\n`,
    );
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  }
}

/** Adds `plugin init` to the `switchyard` program. */
export function registerPluginCommand(program: Command): Command {
  const group = program.command('plugin').description('Write your own plugins (docs/plugins.md)').exitOverride(exitForUsageError);
  group
    .command('init')
    .description('Create a plugin package: switchyard as a peer dependency, a tsup build, a vitest test with switchyard/testing, a README')
    .argument('<dir>', 'directory to create the package in (must be empty or new); its name becomes the package name')
    .exitOverride(exitForUsageError)
    .action(runInit);
  return group;
}
