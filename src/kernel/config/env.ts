/**
 * Environment overrides. Every scalar key reachable from the top through
 * nested objects can be set by the variable named as its path in upper snake
 * case: `listen_addr` -> `LISTEN_ADDR`, `response_cache.fallback_ttl` ->
 * `RESPONSE_CACHE_FALLBACK_TTL`. The keys are found by walking the schema, so
 * plugin sections get overrides without declaring them.
 *
 * - strings as they are; booleans `true` / `false`; numbers in decimal
 * - lists of scalars comma-separated (`CORS_ALLOW_ORIGINS=https://a.com,https://b.com`)
 * - string maps as `k=v,k2=v2` (`PROFILER_TAGS=team=api,region=eu`)
 * - an empty variable counts as unset
 * - keys inside lists of objects or maps of objects (`headers.subgraphs.<name>`)
 *   have no variable; neither have `version` and `plugins`
 *
 * Values are written onto the file's object before validation, so they pass
 * the same checks as the file; problems name the variable.
 */

import type { z } from 'zod';
import { goListenAddress } from '../router/listen-address.js';
import type { ConfigIssue } from './config-error.js';
import { formatKeyPath } from './config-error.js';
import { schemaDef, unwrapSchema } from './schema-walk.js';

/** Kind of a scalar value an environment variable can carry. */
export type EnvScalarKind = 'string' | 'number' | 'boolean';

/** How a variable's text becomes a config value. */
export type EnvValueKind = { readonly type: EnvScalarKind } | { readonly type: 'list'; readonly item: EnvScalarKind } | { readonly type: 'map'; readonly value: EnvScalarKind };

/** One key an environment variable can set. */
export interface EnvBinding {
  /** Variable name, `RESPONSE_CACHE_FALLBACK_TTL`. */
  readonly variable: string;
  /** Key path, `['response_cache', 'fallback_ttl']`. */
  readonly path: ReadonlyArray<string>;
  /** How the text is converted before validation. */
  readonly kind: EnvValueKind;
  /** A Cosmo variable (COSMO_ENV_ALIASES): booleans and numbers as Go spells them (`1`, `T`, `1e-1`), its text rewritten first. */
  readonly cosmo?: { readonly rewrite?: (text: string) => string };
}

/** Options of `envBindings`. */
export interface EnvBindingsOptions {
  /** Top-level keys that come from the file only. Default: `['version', 'plugins']`. */
  readonly exclude?: ReadonlyArray<string>;
}

/** Result of `applyEnvOverrides`. */
export interface EnvApplication {
  /** The input with every valid override written in (the input itself is not changed). */
  readonly config: Record<string, unknown>;
  /** Overrides written, for naming the variable in later validation errors. */
  readonly applied: ReadonlyArray<EnvBinding>;
  /** Variables whose text could not be converted (bad boolean, number, map). */
  readonly issues: ReadonlyArray<ConfigIssue>;
}

/** The environment, as `process.env` holds it. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

type Classified =
  | { readonly type: 'scalar'; readonly kind: EnvScalarKind }
  | { readonly type: 'list'; readonly item: EnvScalarKind }
  | { readonly type: 'map'; readonly value: EnvScalarKind }
  | { readonly type: 'object'; readonly fields: ReadonlyMap<string, ReadonlyArray<z.core.$ZodType>> };

/** Lists every environment variable the schema accepts, in schema order. */
export function envBindings(schema: z.core.$ZodType, { exclude = ['version', 'plugins'] }: EnvBindingsOptions = {}): EnvBinding[] {
  const root = classify([schema]);
  const bindings: EnvBinding[] = [];
  if (root?.type !== 'object') return bindings;
  const seen = new Set<string>();
  const visit = (fields: ReadonlyMap<string, ReadonlyArray<z.core.$ZodType>>, path: ReadonlyArray<string>): void => {
    for (const [key, alternatives] of fields) {
      if (path.length === 0 && exclude.includes(key)) continue;
      const keyPath = [...path, key];
      const found = classify(alternatives);
      if (found === undefined) continue;
      if (found.type === 'object') {
        visit(found.fields, keyPath);
        continue;
      }
      const variable = envVariableName(keyPath);
      // Two paths spelling the same variable (`a_b.c`, `a.b_c`): the first in schema order wins.
      if (seen.has(variable)) continue;
      seen.add(variable);
      const kind: EnvValueKind = found.type === 'scalar' ? { type: found.kind } : found;
      bindings.push({ variable, path: keyPath, kind });
    }
  };
  visit(root.fields, []);
  return bindings;
}

/** The variable name of a key path: `['profiler', 'basic_auth', 'password']` -> `PROFILER_BASIC_AUTH_PASSWORD`. */
export function envVariableName(path: ReadonlyArray<string>): string {
  return path
    .join('_')
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_');
}

/** Writes the overrides found in `env` onto a copy of `config`. */
export function applyEnvOverrides(config: Record<string, unknown>, bindings: ReadonlyArray<EnvBinding>, env: EnvSource): EnvApplication {
  let result = config;
  const applied: EnvBinding[] = [];
  const issues: ConfigIssue[] = [];
  for (const binding of bindings) {
    const raw = env[binding.variable];
    if (raw === undefined || raw === '') continue;
    const text = binding.cosmo?.rewrite ? binding.cosmo.rewrite(raw) : raw;
    const path = formatKeyPath(binding.path);
    const converted = convert(text, binding.kind, binding.cosmo !== undefined);
    if (!converted.ok) {
      issues.push({ path, env: binding.variable, message: converted.reason });
      continue;
    }
    const written = setIn(result, binding.path, converted.value);
    if (written === undefined) {
      issues.push({ path, env: binding.variable, message: 'cannot be applied: a parent key in the file is not a mapping' });
      continue;
    }
    result = written;
    applied.push(binding);
  }
  return { config: result, applied, issues };
}

type Conversion = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

function convert(text: string, kind: EnvValueKind, goSyntax = false): Conversion {
  switch (kind.type) {
    case 'list': {
      const items = text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
      const values: unknown[] = [];
      for (const item of items) {
        const value = convertScalar(item, kind.item);
        if (!value.ok) return value;
        values.push(value.value);
      }
      return { ok: true, value: values };
    }
    case 'map': {
      const entries: Record<string, unknown> = {};
      for (const pair of text.split(',')) {
        if (pair.trim() === '') continue;
        const equals = pair.indexOf('=');
        const key = equals < 0 ? '' : pair.slice(0, equals).trim();
        if (key === '') return { ok: false, reason: `expected key=value pairs separated by commas, got ${JSON.stringify(pair.trim())}` };
        const value = convertScalar(pair.slice(equals + 1).trim(), kind.value);
        if (!value.ok) return value;
        entries[key] = value.value;
      }
      return { ok: true, value: entries };
    }
    default:
      return goSyntax ? convertGoScalar(text, kind.type) : convertScalar(text, kind.type);
  }
}

/** Go's strconv.ParseBool spellings, which Cosmo reads its variables with. */
const GO_BOOLEANS: Readonly<Record<string, boolean>> = {
  1: true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  0: false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

/** A scalar of a Cosmo variable, as Go parses it (strconv.ParseBool, ParseFloat). */
function convertGoScalar(text: string, kind: EnvScalarKind): Conversion {
  const trimmed = text.trim();
  if (kind === 'boolean') {
    const value = Object.hasOwn(GO_BOOLEANS, trimmed) ? GO_BOOLEANS[trimmed] : undefined;
    return value === undefined ? { ok: false, reason: `expected a boolean (true, false, 1, 0, ...), got ${JSON.stringify(text)}` } : { ok: true, value };
  }
  if (kind === 'number' && trimmed !== '' && Number.isFinite(Number(trimmed))) return { ok: true, value: Number(trimmed) };
  return convertScalar(text, kind);
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/;

function convertScalar(text: string, kind: EnvScalarKind): Conversion {
  if (kind === 'string') return { ok: true, value: text };
  const trimmed = text.trim();
  if (kind === 'boolean') {
    if (trimmed === 'true' || trimmed === 'false') return { ok: true, value: trimmed === 'true' };
    return { ok: false, reason: `expected true or false, got ${JSON.stringify(text)}` };
  }
  if (DECIMAL.test(trimmed)) return { ok: true, value: Number(trimmed) };
  return { ok: false, reason: `expected a number, got ${JSON.stringify(text)}` };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Copy-on-write set; `undefined` when a parent exists but is not a mapping (validation reports it). */
function setIn(target: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown): Record<string, unknown> | undefined {
  const [key, ...rest] = path;
  if (key === undefined) return target;
  if (rest.length === 0) return { ...target, [key]: value };
  const child = target[key];
  if (child !== undefined && child !== null && !isPlainObject(child)) return undefined;
  const next = setIn(isPlainObject(child) ? child : {}, rest, value);
  return next === undefined ? undefined : { ...target, [key]: next };
}

/** Classifies the alternatives a key may take (one schema, or the options of a union). */
function classify(alternatives: ReadonlyArray<z.core.$ZodType>): Classified | undefined {
  const found = alternatives.flatMap((schema) => classifyOne(schema) ?? []);
  const first = found[0];
  if (first === undefined) return undefined;
  if (found.every((entry) => entry.type === 'object')) {
    const fields = new Map<string, z.core.$ZodType[]>();
    for (const entry of found) {
      for (const [key, schemas] of entry.fields) fields.set(key, [...(fields.get(key) ?? []), ...schemas]);
    }
    return { type: 'object', fields };
  }
  const scalars = found.filter((entry) => entry.type === 'scalar');
  if (scalars.length === found.length) {
    const kinds = new Set(scalars.map((entry) => entry.kind));
    if (kinds.size === 1) return first;
    // A union such as `string | number`: pass the text and let validation decide.
    return kinds.has('string') ? { type: 'scalar', kind: 'string' } : undefined;
  }
  return found.length === 1 ? first : undefined;
}

function classifyOne(schema: z.core.$ZodType): Classified | undefined {
  const def = schemaDef(unwrapSchema(schema));
  switch (def.type) {
    case 'pipe':
      return classifyOne(def.in) ?? classifyOne(def.out);
    case 'string':
    case 'template_literal':
      return { type: 'scalar', kind: 'string' };
    case 'number':
      return { type: 'scalar', kind: 'number' };
    case 'boolean':
      return { type: 'scalar', kind: 'boolean' };
    case 'enum':
      return scalarOf(Object.values(def.entries));
    case 'literal':
      return scalarOf(def.values);
    case 'object':
      return { type: 'object', fields: new Map(Object.entries(def.shape).map(([key, value]) => [key, [value]])) };
    case 'union':
      return classify(def.options);
    case 'array': {
      const item = classifyOne(def.element);
      return isScalar(item) ? { type: 'list', item: item.kind } : undefined;
    }
    case 'record': {
      const value = classifyOne(def.valueType);
      return isScalar(value) ? { type: 'map', value: value.kind } : undefined;
    }
    default:
      return undefined;
  }
}

function isScalar(entry: Classified | undefined): entry is Extract<Classified, { type: 'scalar' }> {
  return entry !== undefined && entry.type === 'scalar';
}

function scalarOf(values: ReadonlyArray<unknown>): Classified | undefined {
  const kinds = new Set(values.map((value) => typeof value));
  if (kinds.size !== 1) return undefined;
  const [kind] = kinds;
  return kind === 'string' || kind === 'number' || kind === 'boolean' ? { type: 'scalar', kind } : undefined;
}

/**
 * Cosmo Router's names for settings Switchyard has under another variable
 * (its `env` tags in router/pkg/config/config.go), with the same meaning.
 * As in Cosmo, where the environment only supplies defaults, the file wins:
 * one is read only where the file leaves its key out, and where
 * Switchyard's own variable for the key is unset. Values as Go reads them
 * (`REQUIRE_AUTHENTICATION=1`); a bare `:port` listens on every interface,
 * as Go's does.
 */
export const COSMO_ENV_ALIASES: ReadonlyArray<{ readonly variable: string; readonly path: ReadonlyArray<string>; readonly rewrite?: (text: string) => string }> = [
  { variable: 'REQUIRE_AUTHENTICATION', path: ['authorization', 'require_authentication'] },
  { variable: 'REJECT_OPERATION_IF_UNAUTHORIZED', path: ['authorization', 'reject_operation_if_unauthorized'] },
  { variable: 'TRACING_ENABLED', path: ['telemetry', 'tracing', 'enabled'] },
  { variable: 'TRACING_SAMPLING_RATE', path: ['telemetry', 'tracing', 'sampling_rate'] },
  { variable: 'TRACING_PARENT_BASED_SAMPLER', path: ['telemetry', 'tracing', 'parent_based_sampler'] },
  { variable: 'METRICS_OTLP_ENABLED', path: ['telemetry', 'metrics', 'otlp', 'enabled'] },
  { variable: 'PROMETHEUS_ENABLED', path: ['metrics', 'enabled'] },
  { variable: 'PROMETHEUS_LISTEN_ADDR', path: ['metrics', 'listen_addr'], rewrite: goListenAddress },
  { variable: 'PROMETHEUS_HTTP_PATH', path: ['metrics', 'path'] },
  { variable: 'APQ_ENABLED', path: ['automatic_persisted_queries', 'enabled'] },
];

/**
 * Bindings for the Cosmo variables of COSMO_ENV_ALIASES whose key `bindings`
 * has, `config` (the file) leaves out, and whose Switchyard variable is unset
 * in `env`.
 */
export function cosmoEnvBindings(bindings: ReadonlyArray<EnvBinding>, env: EnvSource, config: Readonly<Record<string, unknown>>): EnvBinding[] {
  const byPath = new Map(bindings.map((binding) => [binding.path.join('.'), binding]));
  const out: EnvBinding[] = [];
  for (const alias of COSMO_ENV_ALIASES) {
    const own = byPath.get(alias.path.join('.'));
    if (!own || (env[own.variable] ?? '') !== '' || valueAt(config, own.path) !== undefined) continue;
    out.push({ variable: alias.variable, path: own.path, kind: own.kind, cosmo: alias.rewrite ? { rewrite: alias.rewrite } : {} });
  }
  return out;
}

/** The value at `path` in a parsed config document, if every step is a mapping. */
function valueAt(config: Readonly<Record<string, unknown>>, path: ReadonlyArray<string>): unknown {
  let node: unknown = config;
  for (const key of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}
