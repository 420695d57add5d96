import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, tryParseDuration } from '../../../src/kernel/config/index.js';

function reasonFor(text: string): string {
  const result = tryParseDuration(text);
  if (result.ok) throw new Error(`expected "${text}" to be refused, got ${result.value}`);
  return result.reason;
}

describe('duration strings', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['2h', 7_200_000],
    ['1h2m3s', 3_723_000],
    ['1.5s', 1_500],
    ['0s', 0],
    ['1h500ms', 3_600_500],
    ['0.5ms', 0.5],
    ['1.1s', 1_100],
  ])('parses %s to %d milliseconds', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('refuses a bare number and suggests adding a unit', () => {
    expect(reasonFor('30')).toBe('"30" has no unit; write 30s, 30ms or another duration with a unit');
    expect(reasonFor('0')).toMatch(/has no unit/);
    expect(reasonFor('1.5')).toMatch(/has no unit/);
  });

  it('refuses a negative duration', () => {
    expect(reasonFor('-5s')).toMatch(/is negative/);
  });

  it('refuses an empty string', () => {
    expect(reasonFor('')).toMatch(/^is empty/);
  });

  it.each(['abc', 's', '+5s', '1.2.3s'])('refuses the garbage string %s', (text) => {
    expect(reasonFor(text)).toMatch(/not a duration|without a unit/);
  });

  it('refuses an unknown unit and lists the known ones', () => {
    expect(reasonFor('5d')).toBe('"5d" has an unknown unit "d"; use h, m, s or ms');
    expect(reasonFor('5S')).toMatch(/unknown unit "S"/);
  });

  it('refuses a trailing number without a unit', () => {
    expect(reasonFor('1m30')).toMatch(/number without a unit at "30"/);
  });

  it('refuses units out of order or repeated', () => {
    expect(reasonFor('30s1m')).toMatch(/largest first/);
    expect(reasonFor('1s1s')).toMatch(/largest first/);
  });

  it('refuses whitespace inside the value', () => {
    expect(reasonFor('1m 30s')).toMatch(/whitespace/);
  });

  it('throws a RangeError carrying the reason from parseDuration', () => {
    expect(() => parseDuration('soon')).toThrow(RangeError);
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [1_500, '1.5s'],
    [30_000, '30s'],
    [90_000, '1m30s'],
    [7_200_000, '2h'],
    [3_723_000, '1h2m3s'],
    [3_600_500, '1h500ms'],
    [0.5, '0.5ms'],
  ])('formats %d milliseconds as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 1_000, 1_001, 59_999, 61_500, 3_599_999, 86_400_000]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });

  it('refuses negative or non-finite milliseconds', () => {
    expect(() => formatDuration(-1)).toThrow(RangeError);
    expect(() => formatDuration(Number.NaN)).toThrow(RangeError);
  });
});
