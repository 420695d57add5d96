/**
 * A plugin's config section, declared once: its top-level key, its schema
 * (defaults and checks), the environment-only variables it reads, and the
 * plugins it switches on. The loader validates the section with the rest of
 * the file and derives its environment variables from the schema
 * (`RESPONSE_CACHE_FALLBACK_TTL`); `switchyard router` builds the plugin list
 * from `fromConfig`; `readSection` gives the parsed value its schema's type.
 */

import type { z } from 'zod';
import type { MaybePromise } from '../pipeline/hooks.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { ConfigError, readableIssueMessage, type ConfigIssue } from './config-error.js';
import type { CoreConfig } from './core-schema.js';
import type { LoadedConfig } from './load-config.js';

/** Environment-only variables of a section (`PPROF_ADDR`): the variable's name and the schema its text must pass. */
export type SectionEnvSchemas = Readonly<Record<string, z.ZodType>>;

/** The environment-only variables that were set, each the output of its schema. */
export type SectionEnvValues<Env extends SectionEnvSchemas> = { readonly [Variable in keyof Env]?: z.output<Env[Variable]> };

/** What a section's `fromConfig` is given beside the section's own value. */
export interface ConfigSectionContext<Env extends SectionEnvSchemas = SectionEnvSchemas> {
  /** Core keys with defaults filled in (`storage_providers`, to check ids a section refers to). */
  readonly core: CoreConfig;
  /** The whole validated config, for a section that another section switches on (`authorization` by `authentication`). */
  readonly config: LoadedConfig;
  /** The section's environment-only variables that were set (non-empty), validated. */
  readonly env: SectionEnvValues<Env>;
}

/** A top-level config section owned by a plugin (`response_cache`, `profiler`, ...). Make one with `defineConfigSection`. */
export interface ConfigSection<Schema extends z.ZodType = z.ZodType, Env extends SectionEnvSchemas = SectionEnvSchemas> {
  /** Top-level key, snake_case; also the prefix of its environment variables (`PROFILER_ENABLED`). */
  readonly key: string;
  /** Schema of the section, defaults included; its output is what `readSection` and `fromConfig` get. Use strict objects. */
  readonly schema: Schema;
  /** Plugin name, prefixed to error lines about the section. Default: none. */
  readonly plugin?: string;
  /**
   * Variables read from the environment only, beside the ones every scalar
   * key gets (`PPROF_ADDR`). Checked when the plugins are built; a bad value
   * stops startup naming the variable. Default: none.
   */
  readonly env?: Env;
  /**
   * The plugins the section switches on: none when it is off (a disabled
   * plugin costs nothing). `section` is `undefined` when neither the file nor
   * the environment set it. Load the plugin module here, with `import()`, so
   * reading the config does not load every plugin. Default: none.
   */
  fromConfig?(section: z.output<Schema> | undefined, context: ConfigSectionContext<Env>): MaybePromise<readonly SwitchyardPlugin[]>;
}

/**
 * Declares a config section. The identity at run time; it exists so that
 * `fromConfig`'s arguments are typed from `schema` and `env`.
 */
export function defineConfigSection<Schema extends z.ZodType, Env extends SectionEnvSchemas = Record<never, never>>(
  section: ConfigSection<Schema, Env>,
): ConfigSection<Schema, Env> {
  return section;
}

/** The parsed value of a section, typed by its schema; `undefined` when the section was not given. */
export function readSection<Schema extends z.ZodType>(config: LoadedConfig, section: Pick<ConfigSection<Schema>, 'key' | 'schema'>): z.output<Schema> | undefined {
  // Safe: `sections[key]` is the output of this very schema (validated by parseConfig with the section).
  return config.sections[section.key] as z.output<Schema> | undefined;
}

/**
 * The plugins a section switches on in this config and environment (its
 * `fromConfig`); none without one. The section must have been among the
 * sections the config was parsed with.
 */
export async function sectionPlugins<Schema extends z.ZodType, Env extends SectionEnvSchemas>(
  section: ConfigSection<Schema, Env>,
  config: LoadedConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<SwitchyardPlugin[]> {
  if (section.fromConfig === undefined) return [];
  const context: ConfigSectionContext<Env> = { core: config.core, config, env: readSectionEnv(section, env) };
  return [...(await section.fromConfig(readSection(config, section), context))];
}

/** The section's environment-only variables that are set, each checked against its schema. */
function readSectionEnv<Env extends SectionEnvSchemas>(section: ConfigSection<z.ZodType, Env>, env: Readonly<Record<string, string | undefined>>): SectionEnvValues<Env> {
  const values: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const [variable, schema] of Object.entries(section.env ?? {})) {
    const text = env[variable];
    if (text === undefined || text === '') continue;
    const result = schema.safeParse(text, { error: readableIssueMessage });
    if (result.success) {
      values[variable] = result.data;
      continue;
    }
    const message = result.error.issues[0]?.message ?? 'is not valid';
    issues.push(section.plugin === undefined ? { path: variable, message } : { path: variable, message, plugin: section.plugin });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  // Safe: every value set above is the output of the schema declared for its variable.
  return values as SectionEnvValues<Env>;
}
