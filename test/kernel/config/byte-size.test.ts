import { describe, expect, it } from 'vitest';
import { formatByteSize, parseByteSize, tryParseByteSize } from '../../../src/kernel/config/index.js';

function reasonFor(text: string): string {
  const result = tryParseByteSize(text);
  if (result.ok) throw new Error(`expected "${text}" to be refused, got ${result.value}`);
  return result.reason;
}

describe('byte sizes', () => {
  it.each([
    ['1048576B', 1_048_576],
    ['512KB', 512_000],
    ['1MB', 1_000_000],
    ['2MiB', 2_097_152],
    ['1KiB', 1_024],
    ['1GB', 1_000_000_000],
    ['1GiB', 1_073_741_824],
    ['1TB', 1_000_000_000_000],
    ['1.5KiB', 1_536],
    ['1mb', 1_000_000],
    ['10 MB', 10_000_000],
    ['0B', 0],
  ])('parses %s to %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  it('treats KB, MB and GB as powers of 1000 and KiB, MiB and GiB as powers of 1024', () => {
    expect(parseByteSize('1MB')).toBe(1000 ** 2);
    expect(parseByteSize('1MiB')).toBe(1024 ** 2);
  });

  it('refuses a bare number and suggests the B unit', () => {
    expect(reasonFor('1048576')).toMatch(/^"1048576" has no unit; write 1048576B/);
  });

  it('refuses a negative size, an empty string and garbage', () => {
    expect(reasonFor('-1MB')).toMatch(/is negative/);
    expect(reasonFor('')).toMatch(/^is empty/);
    expect(reasonFor('big')).toMatch(/is not a size/);
  });

  it('refuses an unknown unit and lists the known ones', () => {
    expect(reasonFor('1PB')).toBe('"1PB" has an unknown unit "PB"; use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB');
  });

  it('refuses a fraction of a byte', () => {
    expect(reasonFor('1.5B')).toMatch(/not a whole number of bytes/);
  });

  it('formats bytes with the largest exact unit', () => {
    expect(formatByteSize(1_000_000)).toBe('1MB');
    expect(formatByteSize(2_097_152)).toBe('2MiB');
    expect(formatByteSize(1_500)).toBe('1500B');
    expect(formatByteSize(0)).toBe('0B');
    expect(parseByteSize(formatByteSize(123_456_789))).toBe(123_456_789);
  });
});
