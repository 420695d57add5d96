/**
 * The `matching` regular expressions of `headers` rules. They are
 * JavaScript regular expressions, always matched ignoring case (header names
 * are case-insensitive).
 *
 * Cosmo compiles the same key with Go's RE2, and Cosmo configs often start
 * it with the inline flag `(?i)`: a leading `(?i)` is accepted and changes
 * nothing here. Other Go-only syntax is refused with what to write instead,
 * including constructs JavaScript would otherwise read silently as
 * something else (`\A` is a plain `A` there, `[[:alpha:]]` a set of
 * characters).
 */
import type { ParseResult } from './duration.js';
import { describeValue, z } from './schema-helpers.js';

/** Go's case-insensitive flag, accepted at the start of a pattern. */
const LEADING_CASE_FLAG = '(?i)';

/** Go escapes JavaScript lacks (without the `u` flag it reads `\A` as `A`), with what to write instead. */
const GO_ESCAPES: Readonly<Record<string, string>> = {
  A: "Go's \\A (start of text); write ^",
  z: "Go's \\z (end of text); write $",
  Q: "Go's \\Q...\\E quoting; put a \\ before each special character instead",
  p: "Go's Unicode class \\p; header names are ASCII, so list the characters, such as [a-z0-9-]",
  P: "Go's Unicode class \\P; header names are ASCII, so list the characters, such as [^a-z0-9-]",
};

/** Parses a header-name pattern (a JavaScript regular expression, or one that starts with Go's `(?i)`). */
export function tryHeaderNamePattern(source: string): ParseResult<RegExp> {
  const body = source.startsWith(LEADING_CASE_FLAG) ? source.slice(LEADING_CASE_FLAG.length) : source;
  const goOnly = goOnlySyntax(body);
  if (goOnly !== undefined) return { ok: false, reason: `"${source}" uses ${goOnly}` };
  try {
    return { ok: true, value: new RegExp(body, 'i') };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: `is not a valid regular expression: ${reason}` };
  }
}

/** Compiles a pattern the config already accepted; throws a `SyntaxError` for one it would refuse. */
export function compileHeaderNamePattern(source: string): RegExp {
  const result = tryHeaderNamePattern(source);
  if (!result.ok) throw new SyntaxError(`Invalid header name pattern: ${result.reason}`);
  return result.value;
}

/** The config schema of a `matching` pattern; the value stays the text written. */
export function headerNamePattern(): z.ZodString {
  const wrongType = (issue: z.core.$ZodRawIssue) => (issue.input === undefined ? undefined : `expected a regular expression, got ${describeValue(issue.input)}`);
  return z.string({ error: wrongType }).superRefine(function checkHeaderNamePattern(text, ctx) {
    const result = tryHeaderNamePattern(text);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason, input: text });
  });
}

/** The first Go-only construct in `source`, described with what to write instead; undefined when there is none. */
function goOnlySyntax(source: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === '\\') {
      const next = source[i + 1] ?? '';
      const goEscape = GO_ESCAPES[next];
      if (goEscape !== undefined) return goEscape;
      if (next === 'x' && source[i + 2] === '{') return "Go's \\x{...}; write \\xHH (two hex digits)";
      i++;
    } else if (inClass) {
      const posix = char === '[' ? /^\[:\^?[a-z]+:\]/.exec(source.slice(i)) : null;
      if (posix) return `Go's character class "${posix[0]}"; write the characters, such as [a-z0-9]`;
      if (char === ']') inClass = false;
    } else if (char === '[') {
      inClass = true;
    } else if (char === '(' && source[i + 1] === '?') {
      const rest = source.slice(i + 2);
      if (rest.startsWith('P<')) return "Go's named group (?P<name>...); write (?<name>...)";
      const flags = /^[A-Za-z-]+[):]/.exec(rest);
      if (flags) {
        const group = `(?${flags[0]}`;
        return group === LEADING_CASE_FLAG
          ? 'the flag (?i) past the start; it is accepted only as the first thing in the pattern, and names are matched ignoring case anyway, so remove it'
          : `Go's inline flags "${group}"; only a leading (?i) is accepted (names are matched ignoring case anyway, and have no line breaks), so remove them`;
      }
    }
  }
  return undefined;
}
