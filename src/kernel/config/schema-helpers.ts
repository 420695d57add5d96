/**
 * Zod building blocks for config sections. Every plugin section uses these so
 * durations, sizes, addresses and URLs read and fail the same way everywhere.
 *
 * ```ts
 * import { z, duration } from 'switchyard';
 * const schema = z.strictObject({
 *   fallback_ttl: duration({ min: '1s' }).prefault('30s'),
 * });
 * ```
 *
 * Use `.prefault('<text>')` for a default written as config text (it is
 * parsed like a user value) and `.default(value)` for a default given as the
 * parsed value.
 */

import { z } from 'zod';
import { formatByteSize, tryParseByteSize } from './byte-size.js';
import { formatDuration, MAX_TIMER_MS, tryParseDuration, type ParseResult } from './duration.js';

export { z };

/** A schema reading a duration string and giving milliseconds. */
export type DurationSchema = z.ZodPipe<z.ZodString, z.ZodTransform<number, string>>;
/** A schema reading a byte-size string and giving bytes. */
export type ByteSizeSchema = z.ZodPipe<z.ZodString, z.ZodTransform<number, string>>;

/** Bounds of `duration()`. */
export interface DurationOptions {
  /** Smallest accepted value, as duration text (`'1s'`) or milliseconds. Default: 0. */
  readonly min?: string | number;
  /** Largest accepted value, as duration text (`'5m'`) or milliseconds. Default: none. */
  readonly max?: string | number;
  /**
   * Whether the value sets a timer (default true): then it is at most
   * `MAX_TIMER_MS`, which a Node timer keeps. False for lifetimes that are
   * not timers (cache TTLs, a header value), which may be longer.
   */
  readonly timer?: boolean;
}

/** Bounds of `byteSize()`. */
export interface ByteSizeOptions {
  /** Smallest accepted value, as size text (`'1KB'`) or bytes. Default: 0. */
  readonly min?: string | number;
  /** Largest accepted value, as size text (`'100MB'`) or bytes. Default: none. */
  readonly max?: string | number;
}

/** Options of `hostPort()`. */
export interface HostPortOptions {
  /** Accept port 0 (the OS picks a free port); useful for tests. Default: false. */
  readonly allowPortZero?: boolean;
}

/** Options of `url()`. */
export interface UrlOptions {
  /** Accepted schemes with their colon, e.g. `['redis:', 'rediss:']`. Default: `['http:', 'https:']`. */
  readonly protocols?: ReadonlyArray<string>;
  /** Accept a user name or password before the host (`https://user:pass@host`). Default: true. */
  readonly credentials?: boolean;
}

/** A duration string (`500ms`, `30s`, `1m30s`, `2h`) parsed to milliseconds. */
export function duration({ min, max, timer = true }: DurationOptions = {}): DurationSchema {
  const minMs = bound(min, tryParseDuration, 'duration min');
  const maxMs = bound(max, tryParseDuration, 'duration max');
  return z.string({ error: expectedText('a duration with a unit, such as "30s"') }).transform(function parseDurationValue(text, ctx): number {
    const result = tryParseDuration(text);
    if (!result.ok) return fail(ctx, text, result.reason);
    if (timer && result.value > MAX_TIMER_MS) {
      return fail(ctx, text, `"${text}" is too long; the longest duration is ${formatDuration(MAX_TIMER_MS)} (about 24.8 days)`);
    }
    if (minMs !== undefined && result.value < minMs) return fail(ctx, text, `must be at least ${formatDuration(minMs)}`);
    if (maxMs !== undefined && result.value > maxMs) return fail(ctx, text, `must be at most ${formatDuration(maxMs)}`);
    return result.value;
  });
}

/** A byte-size string (`1MB` = 10⁶ bytes, `2MiB` = 2·2²⁰ bytes) parsed to bytes. */
export function byteSize({ min, max }: ByteSizeOptions = {}): ByteSizeSchema {
  const minBytes = bound(min, tryParseByteSize, 'byteSize min');
  const maxBytes = bound(max, tryParseByteSize, 'byteSize max');
  return z.string({ error: expectedText('a size with a unit, such as "1MB"') }).transform(function parseByteSizeValue(text, ctx): number {
    const result = tryParseByteSize(text);
    if (!result.ok) return fail(ctx, text, result.reason);
    if (minBytes !== undefined && result.value < minBytes) return fail(ctx, text, `must be at least ${formatByteSize(minBytes)}`);
    if (maxBytes !== undefined && result.value > maxBytes) return fail(ctx, text, `must be at most ${formatByteSize(maxBytes)}`);
    return result.value;
  });
}

const HOST_PORT = /^(?<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|)?:(?<port>\d{1,5})$/;

/**
 * A listen or connect address `host:port`, `[::1]:port` or `:port` (all
 * interfaces), port 1..65535. The value stays a string.
 */
export function hostPort({ allowPortZero = false }: HostPortOptions = {}): z.ZodString {
  const lowest = allowPortZero ? 0 : 1;
  return z.string({ error: expectedText('host:port, such as "localhost:3002"') }).superRefine(function checkHostPort(text, ctx) {
    const match = HOST_PORT.exec(text);
    const port = match?.groups?.port;
    if (match === null || port === undefined) {
      ctx.addIssue({ code: 'custom', message: `must be host:port or :port (for example localhost:3002), got "${text}"`, input: text });
      return;
    }
    const value = Number(port);
    if (value < lowest || value > 65535) {
      ctx.addIssue({ code: 'custom', message: `port must be between ${lowest} and 65535, got ${port}`, input: text });
    }
  });
}

/**
 * An absolute URL with one of the given schemes. The value stays a string.
 * Messages never repeat the URL: it may carry a password.
 */
export function url({ protocols = ['http:', 'https:'], credentials = true }: UrlOptions = {}): z.ZodString {
  const schemes = protocols.map((protocol) => `${protocol}//`).join(' or ');
  return z.string({ error: expectedText(`a URL such as "${protocols[0] ?? 'https:'}//host"`) }).superRefine(function checkUrl(text, ctx) {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: `must be an absolute URL starting with ${schemes}`, input: undefined });
      return;
    }
    if (!protocols.includes(parsed.protocol)) {
      ctx.addIssue({ code: 'custom', message: `must start with ${schemes}, got "${parsed.protocol}//"`, input: undefined });
    }
    if (!credentials && (parsed.username !== '' || parsed.password !== '')) {
      ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password before the host ("user:password@")', input: undefined });
    }
  });
}

/** A JavaScript regular expression source, checked to compile. The value stays a string. */
export function regex(): z.ZodString {
  return z.string({ error: expectedText('a regular expression') }).superRefine(function checkRegex(text, ctx) {
    try {
      new RegExp(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      ctx.addIssue({ code: 'custom', message: `is not a valid regular expression: ${reason}`, input: text });
    }
  });
}

function fail(ctx: z.core.$RefinementCtx<string>, text: string, message: string): never {
  ctx.addIssue({ code: 'custom', message, input: text });
  return z.NEVER;
}

/** Resolves a bound given as text or number; a bad bound is a programming error. */
function bound(value: string | number | undefined, parse: (text: string) => ParseResult<number>, what: string): number | undefined {
  if (value === undefined || typeof value === 'number') return value;
  const result = parse(value);
  if (!result.ok) throw new TypeError(`Invalid ${what}: ${result.reason}`);
  return result.value;
}

/**
 * Message for a value of the wrong type. A missing value falls through to
 * the caller's error map (`is required`).
 */
function expectedText(what: string): (issue: z.core.$ZodRawIssue) => string | undefined {
  return function wrongType(issue) {
    if (issue.input === undefined) return undefined;
    return `expected ${what}, got ${describeValue(issue.input)}`;
  };
}

/** Short, readable description of a config value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return `the boolean ${value}`;
    case 'object':
      return 'a mapping';
    default:
      return typeof value;
  }
}
