/**
 * Duration strings, as `router.config.yaml` and the environment write them:
 * `500ms`, `30s`, `1m30s`, `2h`, `1h2m3s`, `1.5s`.
 *
 * Grammar: one or more `<number><unit>` parts, units `h`, `m`, `s`, `ms`,
 * each used at most once and from largest to smallest (`1m30s`, not `30s1m`).
 * Numbers are decimal and may carry a fraction (`1.5s`). A bare number, a
 * sign, whitespace or an unknown unit is refused: a config value without a
 * unit is ambiguous (Go's `time.Duration`, which Cosmo users know, counts
 * nanoseconds; many Node tools count milliseconds).
 *
 * Values are milliseconds with microsecond resolution (`1.5ms` = 1.5).
 * Keys that set a timer are bounded further by the config schema
 * (`duration()` in schema-helpers.ts, `MAX_TIMER_MS`).
 */

/**
 * The longest wait a Node timer keeps, in ms (2³¹−1, 596h31m23.647s, about
 * 24.8 days): Node turns a longer one into 1 ms, so a `refresh_interval:
 * 600h` would fetch the JWKS every millisecond. Timer keys refuse more;
 * lifetimes that are not timers (cache TTLs, `cors.max_age`) do not.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Outcome of parsing a config string: the value, or the reason it was refused. */
export type ParseResult<T> =
  | {
      /** `true`: the text was understood. */
      readonly ok: true;
      /** The parsed value. */
      readonly value: T;
    }
  | {
      /** `false`: the text was refused. */
      readonly ok: false;
      /** Why, phrased to complete `<key>: <reason>`. */
      readonly reason: string;
    };

const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
/** Rank of each unit; parts must appear with strictly decreasing rank. */
const UNIT_RANK: Readonly<Record<string, number>> = { h: 4, m: 3, s: 2, ms: 1 };
const PART = /(\d+(?:\.\d+)?|\.\d+)([^\d.]*)/y;
const BARE_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const EXAMPLES = 'for example 500ms, 30s, 1m30s or 2h';

/** Parses a duration string to milliseconds, returning the reason instead of throwing. */
export function tryParseDuration(text: string): ParseResult<number> {
  if (text.trim() === '') return refuse(`is empty; write a duration with a unit, ${EXAMPLES}`);
  if (text.startsWith('-')) return refuse(`"${text}" is negative; a duration must be zero or more`);
  if (/\s/.test(text)) return refuse(`"${text}" contains whitespace; write it without, ${EXAMPLES}`);
  if (BARE_NUMBER.test(text)) {
    const n = text.replace(/^\+/, '');
    return refuse(`"${text}" has no unit; write ${n}s, ${n}ms or another duration with a unit`);
  }
  let total = 0;
  let lastRank = Number.POSITIVE_INFINITY;
  let position = 0;
  while (position < text.length) {
    PART.lastIndex = position;
    const match = PART.exec(text);
    if (!match) return refuse(`"${text}" is not a duration; use a number with a unit (h, m, s, ms), ${EXAMPLES}`);
    const [part, amount = '', unit = ''] = match;
    if (unit === '') return refuse(`"${text}" has a number without a unit at "${amount}"; use h, m, s or ms`);
    const factor = UNIT_MS[unit];
    const rank = UNIT_RANK[unit];
    if (factor === undefined || rank === undefined) {
      return refuse(`"${text}" has an unknown unit "${unit}"; use h, m, s or ms`);
    }
    if (rank >= lastRank) {
      return refuse(`"${text}" repeats or misorders units; write each unit once, largest first (1h2m3s500ms)`);
    }
    lastRank = rank;
    total += Number(amount) * factor;
    position += part.length;
  }
  const ms = Math.round(total * 1000) / 1000;
  if (!Number.isSafeInteger(Math.floor(ms))) return refuse(`"${text}" is too large`);
  return { ok: true, value: ms };
}

/** Parses a duration string to milliseconds; throws a `RangeError` carrying the reason. */
export function parseDuration(text: string): number {
  const result = tryParseDuration(text);
  if (!result.ok) throw new RangeError(`Invalid duration: ${result.reason}`);
  return result.value;
}

/**
 * Formats milliseconds as the shortest duration string that parses back to
 * the same value: `0s`, `500ms`, `1.5s`, `1m30s`, `2h`, `1h500ms`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`Cannot format ${ms} as a duration`);
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, factor] of [
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    const whole = Math.floor(rest / factor);
    if (whole > 0) parts.push(`${whole}${unit}`);
    rest -= whole * factor;
  }
  if (rest >= 1000) parts.push(`${trimDecimals(rest / 1000, 6)}s`);
  else if (rest > 0) parts.push(`${trimDecimals(rest, 3)}ms`);
  return parts.join('');
}

function trimDecimals(value: number, digits: number): string {
  return String(Number(value.toFixed(digits)));
}

function refuse(reason: string): ParseResult<never> {
  return { ok: false, reason };
}
