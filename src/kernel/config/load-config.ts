/**
 * Reading `router.config.yaml`: YAML -> environment overrides -> one
 * validation of core keys and plugin sections together -> `LoadedConfig`.
 * Every problem is collected and thrown at once as a `ConfigError`.
 */

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { LineCounter, isMap, isNode, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { RouterError } from '../errors.js';
import { ConfigError, formatKeyPath, problemsFromZod, readableIssueMessage, type ConfigIssue, type KeyedProblem } from './config-error.js';
import type { ConfigSection } from './config-section.js';
import { coreConfigSchema, coreConfigShape, type CoreConfig } from './core-schema.js';
import { applyEnvOverrides, cosmoEnvBindings, envBindings, type EnvBinding, type EnvSource } from './env.js';
import { describeValue } from './schema-helpers.js';

/** A validated configuration: core keys, and the plugin sections that were given. */
export interface LoadedConfig {
  /** Core keys with every default filled in (durations in ms, sizes in bytes). */
  readonly core: CoreConfig;
  /**
   * Output of each plugin section's schema, by section key; only sections
   * present in the file or set through the environment. Read with `readSection`.
   */
  readonly sections: Readonly<Record<string, unknown>>;
}

/** Options of `parseConfig`, `parseConfigText` and `loadConfigFile`. */
export interface ParseConfigOptions {
  /** Environment overrides are read from here. Default: `process.env`. */
  readonly env?: EnvSource;
  /** Plugin sections accepted beside the core keys (`defineConfigSection`). Default: none (any other key is unknown). */
  readonly sections?: ReadonlyArray<ConfigSection>;
}

/** Options of `parseConfigText`. */
export interface ParseConfigTextOptions extends ParseConfigOptions {
  /** File name shown in error messages. Default: none. */
  readonly file?: string;
}

/** The schema of a whole config file: the core keys plus optional plugin sections. */
export type ConfigSchema = z.ZodObject<Record<string, z.ZodType>, z.core.$strict>;

const SECTION_KEY = /^[a-z][a-z0-9_]*$/;

/** Merges plugin sections into the core schema as optional top-level keys. Throws on a clash. */
export function buildConfigSchema(sections: ReadonlyArray<ConfigSection> = []): ConfigSchema {
  const shape: Record<string, z.ZodOptional<z.ZodType>> = {};
  for (const { key, schema, plugin } of sections) {
    const owner = plugin === undefined ? '' : `[${plugin}] `;
    if (!SECTION_KEY.test(key)) throw new RouterError('CONFIG_INVALID', `${owner}config section key "${key}" must be snake_case`);
    if (key in coreConfigShape) throw new RouterError('CONFIG_INVALID', `${owner}config section "${key}" clashes with a core key`);
    if (key in shape) throw new RouterError('PLUGIN_DUPLICATE', `${owner}config section "${key}" is declared twice`);
    shape[key] = schema.optional();
  }
  return coreConfigSchema.extend(shape);
}

/** Validates a config object (as parsed from YAML or written in code) with environment overrides. */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): LoadedConfig {
  return validate(raw, options, {});
}

/** Parses YAML text and validates it; YAML syntax errors are reported with line and column. */
export function parseConfigText(text: string, { file, ...options }: ParseConfigTextOptions = {}): LoadedConfig {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    const issues = document.errors.map((error): ConfigIssue => {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      return { path: '', message: `YAML syntax error at line ${line}, column ${col}: ${error.message.split('\n')[0] ?? ''}` };
    });
    throw new ConfigError(issues, { file });
  }
  let raw: unknown;
  try {
    raw = document.toJS();
  } catch (error) {
    // The YAML library refuses documents whose aliases expand without bound ("billion laughs").
    throw new ConfigError([{ path: '', message: `YAML cannot be read: ${error instanceof Error ? error.message : String(error)}` }], { file, cause: error });
  }
  return validate(raw, options, { file, locate: locator(document, lineCounter) });
}

/** Reads and validates a config file. A missing file, bad YAML or a bad value throws `ConfigError`. */
export async function loadConfigFile(path: string, options: ParseConfigOptions = {}): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? error.code : undefined;
    const message =
      code === 'ENOENT'
        ? `file not found (looked for ${resolve(path)})`
        : code === 'EISDIR'
          ? `is a directory, not a file (${resolve(path)})`
          : `cannot be read: ${error instanceof Error ? error.message : String(error)}`;
    throw new ConfigError([{ path: '', message }], { file: path, cause: error });
  }
  return parseConfigText(text, { ...options, file: path });
}

/** A fully defaulted core config (`version: "1"`, nothing else set), for code use. No environment. */
export function defaultConfig(): CoreConfig {
  return coreConfigSchema.parse({ version: '1' }, { error: readableIssueMessage });
}

/** Options of `parseConfigValue`. */
export interface ParseConfigValueOptions {
  /** Where the value sits in the file, e.g. `['plugins', 2, 'options']`; prefixes issue paths. Default: `[]`. */
  readonly at?: ReadonlyArray<PropertyKey>;
  /** Plugin named in the error lines. Default: none. */
  readonly plugin?: string;
}

/** Validates one value (a third-party plugin's `options`) against a schema, throwing `ConfigError`. */
export function parseConfigValue<Schema extends z.ZodType>(schema: Schema, value: unknown, { at = [], plugin }: ParseConfigValueOptions = {}): z.output<Schema> {
  const result = schema.safeParse(value, { error: readableIssueMessage });
  if (result.success) return result.data;
  const issues = problemsFromZod(result.error.issues).map((problem): ConfigIssue => {
    const issue = { path: formatKeyPath([...at, ...problem.segments]), message: problem.message };
    return plugin === undefined ? issue : { ...issue, plugin };
  });
  throw new ConfigError(issues);
}

interface ValidationContext {
  readonly file?: string | undefined;
  /** Line of a key in the source file. */
  readonly locate?: (target: ReadonlyArray<PropertyKey>) => number | undefined;
}

function validate(raw: unknown, { env = process.env, sections = [] }: ParseConfigOptions, context: ValidationContext): LoadedConfig {
  const source = raw ?? {};
  if (typeof source !== 'object' || Array.isArray(source)) {
    const issue = { path: '', message: `expected a mapping of config keys at the top level, got ${describeValue(source)}` };
    throw new ConfigError([issue], { file: context.file });
  }
  const aliased = applyCosmoAliases(source as Record<string, unknown>);
  const aliasIssues = aliased.issues.map((issue) => withLine(issue, context));
  const schema = buildConfigSchema(sections);
  const bindings = envBindings(schema);
  // Cosmo's names for a few variables (REQUIRE_AUTHENTICATION, ...), where the file and Switchyard's own variable leave the key unset.
  const overrides = applyEnvOverrides(aliased.config, [...cosmoEnvBindings(bindings, env, aliased.config), ...bindings], env);
  const result = schema.safeParse(overrides.config, { error: readableIssueMessage });
  if (!result.success) {
    const problems = problemsFromZod(result.error.issues).map((problem) => describeProblem(unalias(problem, aliased.renamed), overrides.applied, sections, context));
    throw new ConfigError([...aliasIssues, ...overrides.issues, ...problems], { file: context.file });
  }
  if (aliasIssues.length > 0 || overrides.issues.length > 0) throw new ConfigError([...aliasIssues, ...overrides.issues], { file: context.file });
  const data: Record<string, unknown> = result.data;
  const core: Record<string, unknown> = {};
  const present: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key in coreConfigShape) core[key] = value;
    else if (value !== undefined) present[key] = value;
  }
  // Safe: every core key was validated by coreConfigShape's schemas just above.
  return { core: core as CoreConfig, sections: present };
}

/** A key moved by an alias: where it was written and where it was validated. */
export interface AliasRename {
  /** Path as written (Cosmo's name), e.g. `['storage_providers', 'redis']`. */
  readonly from: ReadonlyArray<PropertyKey>;
  /** Path it was moved to (Switchyard's name), e.g. `['storage_providers', 'sharedstore']`. */
  readonly to: ReadonlyArray<PropertyKey>;
}

/** Result of `applyCosmoAliases`. */
export interface AliasApplication {
  /** The config with Cosmo's names rewritten to Switchyard's (the input is not changed). */
  readonly config: Record<string, unknown>;
  /** Keys moved, to report later problems under the name the file used. */
  readonly renamed: ReadonlyArray<AliasRename>;
  /** Settings given under both names, and Cosmo keys under an alias section that have no Switchyard equivalent. */
  readonly issues: ReadonlyArray<ConfigIssue & { readonly target: ReadonlyArray<PropertyKey> }>;
}

/** Cosmo's Prometheus keys with a Switchyard equivalent under `metrics`. */
const PROMETHEUS_KEYS = ['enabled', 'listen_addr', 'path'] as const;

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Rewrites the names Cosmo Router uses for settings Switchyard has
 * (INTERFACES.md, "Config"): `storage_providers.redis[]` is
 * `storage_providers.sharedstore[]`, `response_cache.storage.provider: redis`
 * is `sharedstore`, `telemetry.metrics.prometheus.{enabled, listen_addr,
 * path}` are `metrics.*`, `traffic_shaping.router.max_request_body_size` is
 * `limits.max_request_body`. One setting under both names is an issue naming
 * both. Runs on the raw document, before environment overrides and
 * validation; any other key is left for validation to judge.
 */
export function applyCosmoAliases(source: Record<string, unknown>): AliasApplication {
  const config: Record<string, unknown> = { ...source };
  const renamed: AliasRename[] = [];
  const issues: Array<ConfigIssue & { target: ReadonlyArray<PropertyKey> }> = [];
  const both = (cosmo: PropertyKey[], ours: PropertyKey[]): void => {
    issues.push({
      path: formatKeyPath(cosmo),
      target: cosmo,
      message: `and ${formatKeyPath(ours)} set the same thing (${formatKeyPath(cosmo)} is Cosmo's name for it); keep one of them`,
    });
  };

  const providers = config.storage_providers;
  if (isMapping(providers) && providers.redis !== undefined) {
    const next = { ...providers };
    if (next.sharedstore !== undefined) {
      both(['storage_providers', 'redis'], ['storage_providers', 'sharedstore']);
    } else {
      next.sharedstore = next.redis;
      renamed.push({ from: ['storage_providers', 'redis'], to: ['storage_providers', 'sharedstore'] });
    }
    delete next.redis;
    config.storage_providers = next;
  }

  const cache = config.response_cache;
  if (isMapping(cache) && isMapping(cache.storage) && cache.storage.provider === 'redis') {
    config.response_cache = { ...cache, storage: { ...cache.storage, provider: 'sharedstore' } };
  }

  const traffic = config.traffic_shaping;
  if (isMapping(traffic) && isMapping(traffic.router) && traffic.router.max_request_body_size !== undefined) {
    const from = ['traffic_shaping', 'router', 'max_request_body_size'];
    const limits: Record<string, unknown> = isMapping(config.limits) ? { ...config.limits } : {};
    if (limits.max_request_body !== undefined) both(from, ['limits', 'max_request_body']);
    else {
      limits.max_request_body = traffic.router.max_request_body_size;
      renamed.push({ from, to: ['limits', 'max_request_body'] });
      config.limits = limits;
    }
    const { max_request_body_size: _moved, ...router } = traffic.router;
    config.traffic_shaping = { ...traffic, router };
  }

  const telemetry = config.telemetry;
  if (isMapping(telemetry) && isMapping(telemetry.metrics) && isMapping(telemetry.metrics.prometheus)) {
    const prometheus: Record<string, unknown> = { ...telemetry.metrics.prometheus };
    const metrics: Record<string, unknown> = isMapping(config.metrics) ? { ...config.metrics } : {};
    for (const key of PROMETHEUS_KEYS) {
      if (prometheus[key] === undefined) continue;
      const from = ['telemetry', 'metrics', 'prometheus', key];
      if (metrics[key] !== undefined) {
        both(from, ['metrics', key]);
      } else {
        metrics[key] = prometheus[key];
        renamed.push({ from, to: ['metrics', key] });
      }
      delete prometheus[key];
    }
    for (const key of Object.keys(prometheus)) {
      const target = ['telemetry', 'metrics', 'prometheus', key];
      issues.push({
        path: formatKeyPath(['telemetry', 'metrics', 'prometheus']),
        target,
        message: `unknown key "${key}" (Cosmo's Prometheus option; Switchyard's metrics take only ${PROMETHEUS_KEYS.join(', ')})`,
      });
    }
    if (Object.keys(metrics).length > 0 || config.metrics !== undefined) config.metrics = metrics;
    const { prometheus: _moved, ...otherMetrics } = telemetry.metrics;
    const { metrics: _metrics, ...otherTelemetry } = telemetry;
    const restTelemetry = Object.keys(otherMetrics).length > 0 ? { ...otherTelemetry, metrics: otherMetrics } : otherTelemetry;
    if (Object.keys(restTelemetry).length > 0) config.telemetry = restTelemetry;
    else delete config.telemetry;
  }
  return { config, renamed, issues };
}

/** Reports a problem found after an alias moved its key under the key path the file used. */
function unalias(problem: KeyedProblem, renamed: ReadonlyArray<AliasRename>): KeyedProblem {
  const swap = (path: ReadonlyArray<PropertyKey>): ReadonlyArray<PropertyKey> => {
    for (const { from, to } of renamed) {
      if (to.length <= path.length && to.every((segment, index) => path[index] === segment)) return [...from, ...path.slice(to.length)];
    }
    return path;
  };
  return { ...problem, segments: swap(problem.segments), target: swap(problem.target) };
}

function withLine({ target, ...issue }: ConfigIssue & { readonly target: ReadonlyArray<PropertyKey> }, { locate }: ValidationContext): ConfigIssue {
  const line = locate?.(target);
  return line === undefined ? issue : { ...issue, line };
}

/** Adds the variable that set the value, the owning plugin and the file line. */
function describeProblem(problem: KeyedProblem, applied: ReadonlyArray<EnvBinding>, sections: ReadonlyArray<ConfigSection>, { locate }: ValidationContext): ConfigIssue {
  const binding = applied.filter((candidate) => candidate.path.every((segment, index) => problem.target[index] === segment)).sort((a, b) => b.path.length - a.path.length)[0];
  const plugin = sections.find((section) => section.key === problem.target[0])?.plugin;
  const line = binding === undefined ? locate?.(problem.target) : undefined;
  return {
    path: formatKeyPath(problem.segments),
    message: problem.message,
    ...(binding === undefined ? {} : { env: binding.variable }),
    ...(plugin === undefined ? {} : { plugin }),
    ...(line === undefined ? {} : { line }),
  };
}

/** Finds the line of a key path in the YAML document (the key's own line). */
function locator(document: Document, lineCounter: LineCounter): (target: ReadonlyArray<PropertyKey>) => number | undefined {
  return function locate(target) {
    let node: unknown = document.contents;
    let offset: number | undefined;
    for (const segment of target) {
      if (isMap(node)) {
        const pair = node.items.find((item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === String(segment));
        if (pair === undefined) return undefined;
        offset = isNode(pair.key) ? pair.key.range?.[0] : undefined;
        node = pair.value;
      } else if (isSeq(node) && typeof segment === 'number') {
        const item: unknown = node.items[segment];
        if (!isNode(item)) return undefined;
        offset = item.range?.[0];
        node = item;
      } else {
        return undefined;
      }
    }
    return offset === undefined ? undefined : lineCounter.linePos(offset).line;
  };
}
