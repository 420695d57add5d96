import { describe, expect, it } from 'vitest';
import { byteSize, duration, hostPort, readableIssueMessage, regex, url, type z } from '../../../src/kernel/config/index.js';

function messagesOf(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value, { error: readableIssueMessage });
  return result.success ? [] : result.error.issues.map((issue) => issue.message);
}

describe('duration()', () => {
  it('turns a duration string into milliseconds', () => {
    expect(duration().parse('1m30s')).toBe(90_000);
  });

  it('refuses a value below its minimum with the minimum in the message', () => {
    expect(messagesOf(duration({ min: '1s' }), '500ms')).toEqual(['must be at least 1s']);
    expect(messagesOf(duration({ min: '1s' }), '0s')).toEqual(['must be at least 1s']);
    expect(duration({ min: '1s' }).parse('1s')).toBe(1_000);
  });

  it('refuses a value above its maximum', () => {
    expect(messagesOf(duration({ max: 60_000 }), '2m')).toEqual(['must be at most 1m']);
  });

  it('refuses a number given instead of a string', () => {
    expect(messagesOf(duration(), 30)).toEqual(['expected a duration with a unit, such as "30s", got the number 30']);
  });

  it('applies a default written as text through prefault', () => {
    expect(duration().prefault('30s').parse(undefined)).toBe(30_000);
  });

  it('refuses a bad bound when the schema is built', () => {
    expect(() => duration({ min: 'soon' })).toThrow(/Invalid duration min/);
  });
});

describe('byteSize()', () => {
  it('turns a size string into bytes and checks its bounds', () => {
    expect(byteSize().parse('2MiB')).toBe(2_097_152);
    expect(messagesOf(byteSize({ max: '1MB' }), '2MB')).toEqual(['must be at most 1MB']);
    expect(messagesOf(byteSize(), '12')).toEqual(['"12" has no unit; write 12B or use KB, MB, KiB, MiB, ...']);
  });
});

describe('hostPort()', () => {
  it.each(['localhost:3002', ':8080', '0.0.0.0:80', '[::1]:443', 'my_service.internal:65535'])('accepts %s', (value) => {
    expect(hostPort().parse(value)).toBe(value);
  });

  it.each(['localhost', '3002', 'http://localhost:3002', 'a b:80', 'localhost:'])('refuses %s as not host:port', (value) => {
    expect(messagesOf(hostPort(), value)[0]).toMatch(/^must be host:port or :port/);
  });

  it('refuses a port outside 1..65535', () => {
    expect(messagesOf(hostPort(), 'localhost:0')).toEqual(['port must be between 1 and 65535, got 0']);
    expect(messagesOf(hostPort(), 'localhost:70000')).toEqual(['port must be between 1 and 65535, got 70000']);
  });

  it('accepts port 0 when asked to', () => {
    expect(hostPort({ allowPortZero: true }).parse('127.0.0.1:0')).toBe('127.0.0.1:0');
  });
});

describe('url()', () => {
  it('accepts http and https URLs by default', () => {
    expect(url().parse('https://example.com/x')).toBe('https://example.com/x');
  });

  it('refuses another scheme without repeating the URL, which may hold a password', () => {
    const messages = messagesOf(url({ protocols: ['redis:', 'rediss:'] }), 'http://user:secret@host');
    expect(messages).toEqual(['must start with redis:// or rediss://, got "http://"']);
    expect(messages.join()).not.toContain('secret');
  });

  it('refuses a relative or malformed URL', () => {
    expect(messagesOf(url(), 'example.com')).toEqual(['must be an absolute URL starting with http:// or https://']);
  });
});

describe('regex()', () => {
  it('accepts a valid regular expression and refuses one that does not compile', () => {
    expect(regex().parse('^X-.*')).toBe('^X-.*');
    expect(messagesOf(regex(), '([a-z]')[0]).toMatch(/^is not a valid regular expression: /);
  });
});
