/**
 * The boundary of a `multipart/form-data` request, read from its
 * `Content-Type` strictly enough that no reading of the header could find
 * another one: parameters are split as the WHATWG "parse a MIME type"
 * algorithm splits them (a `;` or `=` inside a quoted value is part of the
 * value), and a header whose boundary is in any doubt is a 400 before the
 * body is looked at: a list of media types (a `,` outside quotes), no
 * boundary or more than one, an empty one, one longer than 70 characters or
 * with characters RFC 2046 does not allow, whitespace around its `=`,
 * backslash escapes, an unterminated quoted value or text after one.
 *
 * The body is then parsed with `canonicalContentType(boundary)`, never with
 * the client's header, so the parser splits it at exactly the delimiters
 * multipart-body.ts counted.
 */
import type { GraphQLError } from 'graphql';
import { badRequest } from './graphql-params.js';

/** RFC 2046: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70;

/** RFC 2046 `bchars` without the space (which only a quoted boundary may hold, and never last). */
const BCHARS = /^[0-9A-Za-z'()+_,\-./:=?]+$/;
const QUOTED_BCHARS = /^[0-9A-Za-z'()+_,\-./:=? ]*[0-9A-Za-z'()+_,\-./:=?]$/;

/** HTTP whitespace, as the MIME type parser trims it. */
function isHttpWhitespace(char: string | undefined): boolean {
  return char === ' ' || char === '\t' || char === '\r' || char === '\n';
}

function httpTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isHttpWhitespace(text[start])) start++;
  while (end > start && isHttpWhitespace(text[end - 1])) end--;
  return text.slice(start, end);
}

function unusable(why: string): GraphQLError {
  return badRequest(`Multipart Content-Type ${why}: send "multipart/form-data; boundary=..." with one boundary of 1 to ${MAX_BOUNDARY_LENGTH} characters (RFC 2046).`);
}

/** The one boundary `contentType` names, or a 400 `BAD_REQUEST` saying why there is none that is certain. */
export function multipartBoundary(contentType: string): string {
  const length = contentType.length;
  let position = contentType.indexOf(';');
  if (position === -1) position = length;
  const essence = httpTrim(contentType.slice(0, position));
  if (essence.includes(',')) throw unusable('is a list of media types');
  if (essence.toLowerCase() !== 'multipart/form-data') throw unusable('is not multipart/form-data');
  let boundary: string | undefined;
  while (position < length) {
    // At a `;`: the next parameter's name runs to `=` or the next `;`.
    position++;
    let nameEnd = position;
    while (nameEnd < length && contentType[nameEnd] !== '=' && contentType[nameEnd] !== ';') nameEnd++;
    const rawName = contentType.slice(position, nameEnd);
    if (rawName.includes(',')) throw unusable('is a list of media types');
    const name = httpTrim(rawName).toLowerCase();
    const isBoundary = name === 'boundary';
    if (isBoundary && boundary !== undefined) throw unusable('has more than one boundary parameter');
    position = nameEnd;
    if (position === length || contentType[position] === ';') {
      if (isBoundary) throw unusable('has a boundary parameter without a value');
      continue;
    }
    // At the `=`.
    if (isBoundary && isHttpWhitespace(rawName.at(-1))) throw unusable('has whitespace before the "=" of its boundary');
    position++;
    if (isBoundary && isHttpWhitespace(contentType[position])) throw unusable('has whitespace after the "=" of its boundary');
    let value: string;
    let quoted = false;
    if (contentType[position] === '"') {
      quoted = true;
      value = '';
      let escaped = false;
      for (position++; position < length && contentType[position] !== '"'; position++) {
        let char = contentType[position]!;
        if (char === '\\') {
          escaped = true;
          position++;
          if (position === length) break;
          char = contentType[position]!;
        }
        value += char;
      }
      if (position >= length) throw unusable('has an unterminated quoted parameter value');
      position++;
      if (isBoundary && escaped) throw unusable('has a backslash escape in its boundary');
      // Only whitespace may follow the closing quote (the parser would drop anything else unseen).
      while (position < length && contentType[position] !== ';') {
        if (contentType[position] === ',') throw unusable('is a list of media types');
        if (!isHttpWhitespace(contentType[position])) throw unusable('has text after a quoted parameter value');
        position++;
      }
    } else {
      let valueEnd = position;
      while (valueEnd < length && contentType[valueEnd] !== ';') valueEnd++;
      const raw = contentType.slice(position, valueEnd);
      if (raw.includes(',')) throw unusable('is a list of media types');
      value = httpTrim(raw);
      position = valueEnd;
    }
    if (!isBoundary) continue;
    if (value === '') throw unusable('has an empty boundary');
    if (value.length > MAX_BOUNDARY_LENGTH) throw unusable(`has a boundary longer than ${MAX_BOUNDARY_LENGTH} characters`);
    if (!(quoted ? QUOTED_BCHARS : BCHARS).test(value)) throw unusable('has a boundary with characters RFC 2046 does not allow');
    boundary = value;
  }
  if (boundary === undefined) throw unusable('has no boundary parameter');
  return boundary;
}

/**
 * The `Content-Type` the body is parsed with: `boundary` (checked by
 * `multipartBoundary`: no `"`, `\` or control characters) quoted, so the
 * parser reads back exactly it, whatever else the client's header said.
 */
export function canonicalContentType(boundary: string): string {
  return `multipart/form-data; boundary="${boundary}"`;
}
