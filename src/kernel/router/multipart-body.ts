/**
 * A `multipart/form-data` body as the GraphQL multipart request spec sends
 * it (file uploads): `operations` (the parameters, or a batch) and `map`, a
 * JSON object whose every key names a file part of the request and whose
 * value is the array of paths in `operations` that file fills. A path may
 * only fill a `null` the client put in `operations` (the spec's placeholder
 * for a file). Anything else is a 400 `BAD_REQUEST` naming what is wrong;
 * more than MAX_MULTIPART_MAP_PATHS paths is a 413. Each file is put in
 * place as an `UploadedFile` (JSON writes it as `null`), and every object
 * and array a path goes through is marked: the HTTP transport sends the
 * subgraph calls that carry files as multipart requests (http-transport.ts).
 */
import { GraphQLError } from 'graphql';
import { markLeadsToUpload, UploadedFile } from '../fetch/variables-json.js';
import { badRequest } from './graphql-params.js';
import { canonicalContentType, multipartBoundary } from './multipart-boundary.js';
import { parseClientJson } from './exact-integers.js';

/**
 * How many paths a multipart `map` may name in all: each is walked once, so
 * this bounds the work a small body can ask for (docs/security.md "Limits").
 */
export const MAX_MULTIPART_MAP_PATHS = 1000;

/** Parts a multipart request may have: `operations`, `map` and one file per map path at most. */
export const MAX_MULTIPART_PARTS = MAX_MULTIPART_MAP_PATHS + 2;

/**
 * How many parts a multipart body split at `boundary` has: its delimiters,
 * counted with a native search. Every part the parser finds starts at one
 * (`--` and the boundary), so this never counts fewer. Counts up to one past
 * MAX_MULTIPART_PARTS.
 */
function partCount(bytes: Buffer, boundary: string): number {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let count = 0;
  for (let at = bytes.indexOf(delimiter); at !== -1 && count <= MAX_MULTIPART_PARTS + 1; at = bytes.indexOf(delimiter, at + delimiter.length)) count++;
  // The closing delimiter (`--boundary--`) follows the last part.
  return count - 1;
}

/** The form fields that are not file parts: a `map` key may name neither. */
const NOT_FILE_PARTS: ReadonlySet<string> = new Set(['operations', 'map']);

/** `operations` with every mapped file put in its place: a parameter object, a batch, or what the client sent instead. */
export async function parseMultipart(bytes: Buffer, contentType: string): Promise<unknown> {
  // One boundary, beyond doubt (else a 400): the parts are counted at it and the body is parsed with it alone, never with the client's header.
  const boundary = multipartBoundary(contentType);
  // Parsing costs tens of microseconds per part: count them first, so a body of thousands of tiny parts is refused cheaply.
  if (partCount(bytes, boundary) > MAX_MULTIPART_PARTS) {
    throw new GraphQLError(`A multipart request may have at most ${MAX_MULTIPART_PARTS} parts ("operations", "map" and the files).`, {
      extensions: { code: 'BAD_REQUEST', http: { status: 413 } },
    });
  }
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(bytes), { headers: { 'content-type': canonicalContentType(boundary) } }).formData();
  } catch (error) {
    throw badRequest(`POST body sent invalid multipart data: ${(error as Error).message}`);
  }
  // FormData.get scans every entry: read them into a map once (the first of a repeated name counts, as get() does).
  const fields = new Map<string, FormDataEntryValue>();
  for (const [name, value] of form) if (!fields.has(name)) fields.set(name, value);
  const operationsField = fields.get('operations');
  if (!operationsField) throw badRequest('Missing multipart form field "operations"');
  const operations = jsonField('operations', operationsField);
  const mapField = fields.get('map');
  if (mapField == null) return operations;
  const map = jsonField('map', mapField);
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    throw badRequest('Multipart form field "map" must be a JSON object of file part names to arrays of paths in "operations".');
  }
  let count = 0;
  for (const [part, paths] of Object.entries(map)) {
    if (!Array.isArray(paths) || !paths.every((path) => typeof path === 'string')) {
      throw badRequest(`Multipart form field "map" entry "${bounded(part)}" must be an array of paths (strings) in "operations".`);
    }
    // A text field is not a file part: its string never stands in for a file.
    const sent = NOT_FILE_PARTS.has(part) ? undefined : fields.get(part);
    if (sent === undefined || typeof sent === 'string') {
      throw badRequest(`Multipart form field "map" names file part "${bounded(part)}", which the request does not have.`);
    }
    count += paths.length;
    if (count > MAX_MULTIPART_MAP_PATHS) {
      throw new GraphQLError(`Multipart form field "map" names more than ${MAX_MULTIPART_MAP_PATHS} paths.`, {
        extensions: { code: 'BAD_REQUEST', http: { status: 413 } },
      });
    }
    if (paths.length === 0) continue;
    const file = new UploadedFile([sent], sent.name, { type: sent.type, lastModified: sent.lastModified });
    for (const path of paths as string[]) fillPlaceholder(operations, path, file);
  }
  return operations;
}

/** A multipart form field holding JSON text (`operations`, `map`), parsed. */
function jsonField(name: string, value: FormDataEntryValue): unknown {
  if (typeof value !== 'string') throw badRequest(`Multipart form field "${name}" must be a string`);
  try {
    return parseClientJson(value);
  } catch {
    throw badRequest(`Multipart form field "${name}" must be a valid JSON string`);
  }
}

/** Names that would reach a prototype rather than the client's data. */
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** An array index as JSON would write it (`0`, `12`; not `01`, `-1`, `length`). */
const CANONICAL_INDEX = /^(?:0|[1-9]\d*)$/;

/**
 * Puts a file at `a.b.c` in `operations`: every step must be the client's
 * own object or array entry, and the last one a `null`. Throws a 400 otherwise.
 * Marks each object and array on the way (variables-json.ts `mayHoldUploads`).
 */
function fillPlaceholder(operations: unknown, path: string, value: unknown): void {
  const keys = path.split('.');
  let current: unknown = operations;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (current === null || typeof current !== 'object' || UNSAFE_KEYS.has(key) || !hasEntry(current, key)) throw badPath(path);
    const container = current as Record<string, unknown>;
    if (i === keys.length - 1) {
      if (container[key] !== null) throw badPath(path);
      container[key] = value;
      for (let step: unknown = operations, j = 0; j < i; j++) {
        step = (step as Record<string, unknown>)[keys[j]!];
        markLeadsToUpload(step as object);
      }
      return;
    }
    current = container[key];
  }
}

/** Whether `key` names data the client sent: an own property, or an index within an array. */
function hasEntry(container: object, key: string): boolean {
  if (Array.isArray(container)) return CANONICAL_INDEX.test(key) && Number(key) < container.length;
  return Object.hasOwn(container, key);
}

function badPath(path: string): GraphQLError {
  return badRequest(`Multipart form field "map" path "${bounded(path)}" does not name a null placeholder in "operations".`);
}

/** A client's name or path as an error quotes it: at most 100 characters. */
function bounded(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
