/**
 * Byte sizes, as `router.config.yaml` and the environment write them:
 * `1MB`, `512KB`, `1048576B`, `2MiB`, `1.5GB`.
 *
 * Units follow Cosmo Router (which parses sizes with go-humanize): decimal
 * units are powers of 1000 and binary units powers of 1024.
 *
 * | unit | bytes |
 * |---|---|
 * | `B` | 1 |
 * | `KB` / `MB` / `GB` / `TB` | 1000 / 1000² / 1000³ / 1000⁴ |
 * | `KiB` / `MiB` / `GiB` / `TiB` | 1024 / 1024² / 1024³ / 1024⁴ |
 *
 * So `1MB` is 1,000,000 bytes and `1MiB` is 1,048,576 bytes. Units are
 * case-insensitive (`1mb` = `1MB`) and may be separated from the number by
 * one space. Unlike go-humanize, a bare number is refused (write `1048576B`),
 * as for durations: a unit-less size is too easy to misread.
 * Fractions are allowed with a unit larger than `B` and rounded to whole bytes.
 */

import type { ParseResult } from './duration.js';

/** Unit labels as written when formatting, largest first. */
const UNITS: ReadonlyArray<readonly [label: string, bytes: number]> = [
  ['TiB', 1024 ** 4],
  ['TB', 1000 ** 4],
  ['GiB', 1024 ** 3],
  ['GB', 1000 ** 3],
  ['MiB', 1024 ** 2],
  ['MB', 1000 ** 2],
  ['KiB', 1024],
  ['KB', 1000],
  ['B', 1],
];
const BYTES_BY_UNIT = new Map(UNITS.map(([label, bytes]) => [label.toLowerCase(), bytes]));
const SIZE = /^(\d+(?:\.\d+)?|\.\d+) ?([A-Za-z]+)$/;
const BARE_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const UNIT_LIST = 'B, KB, MB, GB, TB, KiB, MiB, GiB or TiB';

/** Parses a byte-size string to a whole number of bytes, returning the reason instead of throwing. */
export function tryParseByteSize(text: string): ParseResult<number> {
  if (text.trim() === '') return refuse(`is empty; write a size with a unit, for example 1MB or 512KiB`);
  if (text.startsWith('-')) return refuse(`"${text}" is negative; a size must be zero or more`);
  if (BARE_NUMBER.test(text)) {
    return refuse(`"${text}" has no unit; write ${text.replace(/^\+/, '')}B or use KB, MB, KiB, MiB, ...`);
  }
  const match = SIZE.exec(text);
  if (!match) return refuse(`"${text}" is not a size; use a number with a unit, for example 1MB, 512KB or 2MiB`);
  const [, amount = '', unit = ''] = match;
  const factor = BYTES_BY_UNIT.get(unit.toLowerCase());
  if (factor === undefined) return refuse(`"${text}" has an unknown unit "${unit}"; use ${UNIT_LIST}`);
  const value = Number(amount) * factor;
  if (factor === 1 && !Number.isInteger(value)) return refuse(`"${text}" is not a whole number of bytes`);
  const bytes = Math.round(value);
  if (!Number.isSafeInteger(bytes)) return refuse(`"${text}" is too large`);
  return { ok: true, value: bytes };
}

/** Parses a byte-size string to bytes; throws a `RangeError` carrying the reason. */
export function parseByteSize(text: string): number {
  const result = tryParseByteSize(text);
  if (!result.ok) throw new RangeError(`Invalid byte size: ${result.reason}`);
  return result.value;
}

/**
 * Formats bytes with the largest unit that divides them exactly, so the text
 * parses back to the same value: `1MB`, `2MiB`, `1500B`... `0B`.
 */
export function formatByteSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`Cannot format ${bytes} as a byte size`);
  if (bytes === 0) return '0B';
  const [label, factor] = UNITS.find(([, size]) => bytes % size === 0) ?? ['B', 1];
  return `${bytes / factor}${label}`;
}

function refuse(reason: string): ParseResult<never> {
  return { ok: false, reason };
}
