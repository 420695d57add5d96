/**
 * The error a bad configuration stops startup with: every problem at once,
 * one line each, `<key.path>: <reason>`, and no stack trace in the message.
 */

import type { z } from 'zod';
import { RouterError } from '../errors.js';
import { describeValue } from './schema-helpers.js';

/** One problem in the configuration. */
export interface ConfigIssue {
  /** Key path, dotted with list indexes (`storage_providers.sharedstore[1].id`); `''` for the whole file. */
  readonly path: string;
  /** What is wrong, phrased to follow `<path>: `. */
  readonly message: string;
  /** Environment variable the offending value came from. Default: none (it came from the file). */
  readonly env?: string;
  /** Plugin owning the section the key is in. Default: none (a core key). */
  readonly plugin?: string;
  /** 1-based line of the key in the YAML file. Default: none (not from a file, or not located). */
  readonly line?: number;
}

/** Options of `new ConfigError(...)`. */
export interface ConfigErrorOptions {
  /** File the configuration was read from, named in the first line. Default: none. */
  readonly file?: string;
  /** Underlying error (file system, YAML parser). Default: none. */
  readonly cause?: unknown;
}

/** Startup stopped because the configuration is invalid. Code `CONFIG_INVALID`. */
export class ConfigError extends RouterError {
  /** Every problem found, in file order where known. */
  readonly issues: ReadonlyArray<ConfigIssue>;
  /** File the configuration was read from, if any. */
  readonly file: string | undefined;

  constructor(issues: ReadonlyArray<ConfigIssue>, { file, cause }: ConfigErrorOptions = {}) {
    const headline = file === undefined ? 'Invalid configuration' : `Invalid configuration in ${file}`;
    const lines = issues.map((issue) => `  ${formatConfigIssue(issue)}`);
    super('CONFIG_INVALID', [`${headline}:`, ...lines].join('\n'), { cause });
    this.name = 'ConfigError';
    this.issues = issues;
    this.file = file;
  }
}

/** One issue as a line: `[plugin] ENV_VAR (key.path): reason (line N)`. */
export function formatConfigIssue(issue: ConfigIssue): string {
  const plugin = issue.plugin === undefined ? '' : `[${issue.plugin}] `;
  const where = issue.env === undefined ? issue.path : `${issue.env} (${issue.path})`;
  const line = issue.line === undefined ? '' : ` (line ${issue.line})`;
  return where === '' ? `${plugin}${issue.message}${line}` : `${plugin}${where}: ${issue.message}${line}`;
}

/** Writes path segments as a key path: `headers.subgraphs.products.request[0].named`. */
export function formatKeyPath(segments: ReadonlyArray<PropertyKey>): string {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/** A validation problem tied to a key, before env and file positions are added. */
export interface KeyedProblem {
  /** Segments of the key the message is about (the parent object for unknown keys). */
  readonly segments: ReadonlyArray<PropertyKey>;
  /** Segments of the value to locate (the unknown key itself for unknown keys). */
  readonly target: ReadonlyArray<PropertyKey>;
  /** Readable reason. */
  readonly message: string;
}

/** Splits zod issues into one problem per key; an `unrecognized_keys` issue becomes one per key. */
export function problemsFromZod(issues: ReadonlyArray<z.core.$ZodIssue>): KeyedProblem[] {
  const problems: KeyedProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({ segments: issue.path, target: [...issue.path, key], message: `unknown key "${key}"` });
      }
    } else {
      problems.push({ segments: issue.path, target: issue.path, message: issue.message });
    }
  }
  return problems;
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
  map: 'a mapping',
};

/**
 * Error map giving readable default messages (`is required`,
 * `must be one of ...`); messages set by a schema take precedence.
 * Pass it as `schema.safeParse(value, { error: readableIssueMessage })`.
 */
export function readableIssueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${describeValue(issue.input)}`;
    case 'invalid_value':
      if (issue.values.length === 1) return `must be ${JSON.stringify(issue.values[0])}, got ${describeValue(issue.input)}`;
      return `must be one of ${issue.values.map(String).join(', ')}; got ${describeValue(issue.input)}`;
    case 'too_small':
      return sizeMessage('at least', 'greater than', issue.origin, issue.minimum, issue.inclusive);
    case 'too_big':
      return sizeMessage('at most', 'less than', issue.origin, issue.maximum, issue.inclusive);
    case 'invalid_format':
      if (issue.format === 'starts_with' && 'prefix' in issue) return `must start with ${JSON.stringify(issue.prefix)}`;
      if (issue.format === 'regex' && 'pattern' in issue) return `must match ${String(issue.pattern)}`;
      return `must be a valid ${issue.format}`;
    case 'invalid_union':
      return unionMessage(issue);
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_key':
      return 'has an invalid key';
    default:
      return undefined;
  }
}

function sizeMessage(bound: string, strict: string, origin: string, limit: number | bigint | Date, inclusive: boolean | undefined): string {
  const words = inclusive === false ? strict : bound;
  if (origin === 'string') return Number(limit) === 1 && inclusive !== false ? 'must not be empty' : `must be ${words} ${String(limit)} characters long`;
  if (origin === 'array' || origin === 'set') return `must list ${words} ${String(limit)} item${Number(limit) === 1 ? '' : 's'}`;
  return `must be ${words} ${String(limit)}`;
}

function unionMessage(issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidUnion>): string {
  const { discriminator, options } = issue as { discriminator?: unknown; options?: unknown };
  if (typeof discriminator === 'string' && Array.isArray(options)) {
    const input = issue.input;
    const given = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[discriminator] : undefined;
    const list = options.map(String).join(', ');
    return given === undefined ? `is required (one of ${list})` : `must be one of ${list}; got ${describeValue(given)}`;
  }
  return `does not match any allowed form, got ${describeValue(issue.input)}`;
}
