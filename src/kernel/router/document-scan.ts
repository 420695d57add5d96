/**
 * A linear pass over an operation's text before graphql-js parses it.
 * graphql-js's parser is recursive, so text nested a few thousand levels
 * deep overflows the stack (a `RangeError`, a 500). This scan counts nesting
 * of `{`, `[` and `(` outside strings and comments and refuses text nested
 * deeper than MAX_NESTING with a 400. It also counts tokens, comments
 * included (graphql-js's `maxTokens` skips comments), for `limits.max_tokens`,
 * and estimates the heap the parsed document will take (cache budgets).
 */
import { RouterError } from '../errors.js';

/** Deepest nesting of `{` / `[` / `(` accepted in an operation's text, whatever `limits.max_depth` says. */
export const MAX_NESTING = 256;

/**
 * Heap a parsed document takes per token, as measured on graphql-js 16 with
 * locations (the AST node, its Location and the Token it links): about 250
 * bytes for typical operations, up to 510 for long runs of short fields.
 * The upper end, so estimates err on the large side.
 */
const BYTES_PER_TOKEN = 512;

export interface ScanLimits {
  /** `limits.max_depth` (0 = off): picks the error code when the nesting bound is hit. */
  readonly maxDepth: number;
  /** `limits.max_tokens` (0 = off): most tokens, comments counted. */
  readonly maxTokens: number;
}

export interface DocumentScan {
  /** Tokens, comments included. */
  readonly tokens: number;
  /** Deepest `{`/`[`/`(` nesting. */
  readonly nesting: number;
  /** Estimated heap of the parsed document, source text included, in bytes. */
  readonly weight: number;
}

/* Character codes. */
const TAB = 9;
const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;
const SPACE = 32;
const QUOTE = 34;
const HASH = 35;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const BACKSLASH = 92;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const BOM = 0xfeff;
const PLUS = 43;

/**
 * Scans `text` once, left to right. Throws a 400 `RouterError` when the
 * nesting bound or `maxTokens` is exceeded; malformed text (an unterminated
 * string, a stray character) is left for graphql-js to report.
 */
export function scanDocument(text: string, limits: ScanLimits): DocumentScan {
  const length = text.length;
  const maxTokens = limits.maxTokens > 0 ? limits.maxTokens : Infinity;
  let tokens = 0;
  let depth = 0;
  let deepest = 0;
  /** Open `{` outside parentheses: selection sets (braces inside arguments are object values). */
  let selectionDepth = 0;
  let parens = 0;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === SPACE || code === COMMA || code === LINE_FEED || code === CARRIAGE_RETURN || code === TAB || code === BOM) {
      i++;
      continue;
    }
    if (++tokens > maxTokens) {
      throw new RouterError('MAX_TOKENS_EXCEEDED', `The operation has more than ${limits.maxTokens} tokens (comments included).`, { status: 400 });
    }
    if (code === HASH) {
      i = lineEnd(text, i + 1);
    } else if (code === QUOTE) {
      i = text.startsWith('""', i + 1) ? blockStringEnd(text, i + 3) : stringEnd(text, i + 1);
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET || code === OPEN_PAREN) {
      if (code === OPEN_PAREN) parens++;
      else if (code === OPEN_BRACE && parens === 0) selectionDepth++;
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > MAX_NESTING) throw tooDeep(selectionDepth, limits.maxDepth);
      }
      i++;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET || code === CLOSE_PAREN) {
      if (code === CLOSE_PAREN) parens = Math.max(0, parens - 1);
      else if (code === CLOSE_BRACE && parens === 0) selectionDepth = Math.max(0, selectionDepth - 1);
      depth = Math.max(0, depth - 1);
      i++;
    } else if (code === DOT && text.startsWith('..', i + 1)) {
      i += 3;
    } else if (isNameChar(code) && !isDigit(code)) {
      i++;
      while (i < length && isNameChar(text.charCodeAt(i))) i++;
    } else if (isDigit(code) || code === MINUS) {
      // A number (`-1.5e+3`): digits, a dot, an exponent and its sign.
      i++;
      while (i < length && isNumberChar(text.charCodeAt(i))) i++;
    } else {
      i++;
    }
  }
  return { tokens, nesting: deepest, weight: tokens * BYTES_PER_TOKEN + length * 2 };
}

function tooDeep(selectionDepth: number, maxDepth: number): RouterError {
  if (maxDepth > 0 && selectionDepth > maxDepth) {
    return new RouterError('MAX_DEPTH_EXCEEDED', `The operation nests selections more than ${MAX_NESTING} levels deep; the limit is ${maxDepth}.`, { status: 400 });
  }
  return new RouterError('GRAPHQL_PARSE_FAILED', `Syntax Error: the operation nests braces, brackets or parentheses more than ${MAX_NESTING} levels deep.`, {
    status: 400,
  });
}

function isNameChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isNumberChar(code: number): boolean {
  return isDigit(code) || code === DOT || code === MINUS || code === PLUS || code === 101 || code === 69;
}

/** Index just past the comment's line (a comment ends at a line terminator). */
function lineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === LINE_FEED || code === CARRIAGE_RETURN) return i;
  }
  return text.length;
}

/** Index just past the closing quote of a `"..."` string; at a line end when unterminated (graphql-js reports it). */
function stringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH) i++;
    else if (code === QUOTE) return i + 1;
    else if (code === LINE_FEED || code === CARRIAGE_RETURN) return i;
  }
  return text.length;
}

/** Index just past the closing `"""` of a block string; `\"""` is an escaped quote triple inside one. */
function blockStringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH && text.startsWith('"""', i + 1)) i += 3;
    else if (code === QUOTE && text.startsWith('""', i + 1)) return i + 3;
  }
  return text.length;
}

/** Estimated heap of `text` once parsed (cache budgets), without limits. */
export function estimateDocumentBytes(text: string): number {
  try {
    return scanDocument(text, { maxDepth: 0, maxTokens: 0 }).weight;
  } catch {
    // Nested beyond MAX_NESTING: never parsed here; the densest text costs about 256 bytes a character.
    return text.length * 256;
  }
}
