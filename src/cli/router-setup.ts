import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from '../kernel/config/config-error.js';
import { sectionPlugins, type ConfigSection } from '../kernel/config/config-section.js';
import { loadConfigFile, parseConfig, type LoadedConfig } from '../kernel/config/load-config.js';
import type { z } from 'zod';
import type { PluginFactory, SwitchyardPlugin } from '../kernel/pipeline/plugin.js';
import { builtinSections } from './builtin-plugins.js';
import { resolvePluginPackage } from './resolve-plugin-package.js';

/** What `switchyard router` starts from. */
export interface RouterSetup {
  readonly config: LoadedConfig;
  readonly plugins: SwitchyardPlugin[];
  /** Graph file or URL (absolute), if any. */
  readonly graph: string | undefined;
}

/** Options of `loadRouterSetup`, as the CLI flags give them. */
export interface RouterSetupOptions {
  /** `-c`: the config file. */
  readonly configPath?: string;
  /** `--supergraph`: a graph file or URL, overriding `execution_config.file.path`. */
  readonly supergraph?: string;
  /** `--listen-addr`, overriding `listen_addr`. */
  readonly listenAddr?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Where `router.config.yaml` is looked for without `-c`. Default: the working directory. */
  readonly cwd?: string;
  /**
   * Config sections of the program's own plugins (`defineConfigSection`):
   * validated with the file and the environment like the built-in ones, and
   * their plugins added after the built-in ones. Default: none.
   */
  readonly sections?: ReadonlyArray<ConfigSection>;
}

/**
 * Reads the config (file, then environment), and builds the plugin list it
 * describes: built-ins (and `options.sections`) from their sections,
 * third-party packages from `plugins`. The graph path and `plugins` packages
 * in the file resolve against the file's folder; `--supergraph` against the
 * working directory.
 */
export async function loadRouterSetup(options: RouterSetupOptions): Promise<RouterSetup> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const sections = [...builtinSections, ...(options.sections ?? [])];
  let configPath = options.configPath;
  if (!configPath && !options.supergraph) configPath = 'router.config.yaml';
  let config: LoadedConfig;
  let baseDir = cwd;
  if (configPath) {
    const absolute = resolve(cwd, configPath);
    config = await loadConfigFile(absolute, { env, sections });
    baseDir = dirname(absolute);
  } else {
    config = parseConfig({ version: '1' }, { env, sections });
  }
  if (options.listenAddr) {
    config = { ...config, core: { ...config.core, listen_addr: options.listenAddr } };
  }
  const graphPath = options.supergraph ?? config.core.execution_config.file.path;
  const graph =
    graphPath === undefined ? undefined : graphLocation(graphPath, options.supergraph ? cwd : baseDir, options.supergraph ? '--supergraph' : 'execution_config.file.path');
  const plugins: SwitchyardPlugin[] = [];
  for (const section of sections) plugins.push(...(await sectionPlugins(section, config, env)));
  plugins.push(...(await loadThirdPartyPlugins(config, baseDir)));
  return { config, plugins, graph };
}

/** An http(s) URL as it is; a `file:` URL as its path (files are watched by path); a relative path from `baseDir`. */
function graphLocation(graphPath: string, baseDir: string, named: string): string {
  if (/^https?:\/\//i.test(graphPath)) return graphPath;
  if (/^file:/i.test(graphPath)) {
    try {
      return fileURLToPath(graphPath);
    } catch (error) {
      throw new ConfigError([{ path: named, message: `${JSON.stringify(graphPath)} is not a local file URL: ${(error as Error).message}` }]);
    }
  }
  return resolve(baseDir, graphPath);
}

async function loadThirdPartyPlugins(config: LoadedConfig, baseDir: string): Promise<SwitchyardPlugin[]> {
  const plugins: SwitchyardPlugin[] = [];
  for (const [index, entry] of config.core.plugins.entries()) {
    const at = `plugins[${index}].package`;
    const local = entry.package.startsWith('.') ? resolve(baseDir, entry.package) : undefined;
    const resolved = local && existsSync(local) ? local : resolvePluginPackage(entry.package, baseDir);
    if (resolved === undefined) {
      throw new ConfigError([{ path: at, message: `cannot find package "${entry.package}" (install it next to the config file)` }]);
    }
    const module = (await import(pathToFileURL(resolved).href)) as { default?: unknown; plugin?: unknown };
    const factory = (module.default ?? module.plugin) as { configure?: PluginFactory<z.ZodType>['configure'] } | undefined;
    if (!factory || typeof factory.configure !== 'function') {
      throw new ConfigError([{ path: at, message: `"${entry.package}" has no default export made with definePlugin()` }]);
    }
    plugins.push(factory.configure(entry.options, ['plugins', index, 'options']));
  }
  return plugins;
}
