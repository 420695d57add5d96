/**
 * The files `switchyard operations push` accepts, detected in this order:
 *
 * 1. a plain GraphQL document (`.graphql`, `.gql`, or any text that is not
 *    JSON): one operation whose id is the SHA-256 of the file's bytes;
 * 2. an Apollo persisted-query manifest
 *    `{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [{id, name, type, body}]}`
 *    (ids must be the SHA-256 of their body; other versions are refused);
 * 3. a Relay query map, `{"<id>": "<text>"}` or `[["<id>", "<text>"], ...]`:
 *    each text is stored under its SHA-256 and the Relay id kept as an alias.
 *
 * Every file is checked completely before anything is pushed; all problems
 * are reported together.
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { GraphQLError, Kind, parse, type DocumentNode } from 'graphql';
import { isRecord } from './json-value.js';
import { normalizeDocument } from './normalize.js';
import { canonicalAlias, sha256Hex } from './operation-id.js';
import type { OperationInput } from './operations-store.js';
import type { OperationType } from './registry.js';

/** How a file was read. */
export type OperationFileFormat = 'graphql' | 'apollo-persisted-query-manifest' | 'relay-query-map';

/** One file's operations. */
export interface OperationFile {
  /** The path as given. */
  readonly path: string;
  /** The format it was detected as. */
  readonly format: OperationFileFormat;
  /** Its operations, checked, in file order. */
  readonly operations: readonly OperationInput[];
}

/** Thrown when one or more files cannot be pushed; one problem per line, each naming its file. */
export class OperationFileError extends Error {
  /** One line per problem, each starting with the file's path. */
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'OperationFileError';
    this.problems = problems;
  }
}

const GRAPHQL_EXTENSIONS = new Set(['.graphql', '.gql', '.graphqls']);
const APOLLO_FORMAT = 'apollo-persisted-query-manifest';
const OPERATION_TYPES = new Set<string>(['query', 'mutation', 'subscription']);

/** Reads and checks every file; throws `OperationFileError` listing every problem of every file. */
export async function readOperationFiles(paths: readonly string[]): Promise<OperationFile[]> {
  const problems: string[] = [];
  const files: OperationFile[] = [];
  for (const path of paths) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
    } catch (error) {
      const code = error instanceof Error && 'code' in error ? error.code : undefined;
      problems.push(`${path}: ${code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory, not a file' : error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const result = parseOperationFile(path, bytes);
    if ('problems' in result) problems.push(...result.problems.map((problem) => `${path}: ${problem}`));
    else files.push(result);
  }
  if (problems.length > 0) throw new OperationFileError(problems);
  return files;
}

/** Detects a file's format and reads its operations, or lists what is wrong with it. */
export function parseOperationFile(path: string, bytes: Uint8Array): OperationFile | { problems: string[] } {
  let text: string;
  try {
    // The BOM is kept: the id is the hash of the bytes, so the text must be exactly them.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { problems: ['is not UTF-8 text'] };
  }
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  const looksLikeJson = trimmed.startsWith('{') || trimmed.startsWith('[');
  if (GRAPHQL_EXTENSIONS.has(extname(path).toLowerCase()) || !looksLikeJson) {
    const read = readDocument(text, '');
    if ('problem' in read) {
      return {
        problems: [
          looksLikeJson || GRAPHQL_EXTENSIONS.has(extname(path).toLowerCase())
            ? read.problem
            : `unknown format: not a GraphQL document (${read.problem}), an Apollo persisted-query manifest or a Relay query map`,
        ],
      };
    }
    return { path, format: 'graphql', operations: [{ ...read, id: sha256Hex(bytes), body: text }] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problems: [`is not valid JSON: ${error instanceof Error ? error.message : String(error)}`] };
  }
  if (isRecord(json) && 'format' in json) return readApolloManifest(path, json);
  const pairs = relayPairs(json, text);
  if (pairs) return readRelayMap(path, pairs);
  return {
    problems: [
      'unknown format: expected a GraphQL document, an Apollo persisted-query manifest ({"format": "apollo-persisted-query-manifest", ...}) or a Relay query map ({"<id>": "<text>"} or [["<id>", "<text>"]])',
    ],
  };
}

function readApolloManifest(path: string, json: Record<string, unknown>): OperationFile | { problems: string[] } {
  if (json.format !== APOLLO_FORMAT) return { problems: [`unknown manifest format ${JSON.stringify(json.format)}; expected "${APOLLO_FORMAT}"`] };
  if (json.version !== 1) return { problems: [`Apollo persisted-query manifest version ${JSON.stringify(json.version)} is not supported; only version 1 is`] };
  if (!Array.isArray(json.operations)) return { problems: ['"operations" must be a list of {id, name, type, body}'] };
  if (json.operations.length === 0) return { problems: ['holds no operations (an empty Apollo persisted-query manifest): nothing to push'] };
  const problems: string[] = [];
  const operations: OperationInput[] = [];
  json.operations.forEach((entry: unknown, index) => {
    const label = `operation ${index}`;
    if (!isRecord(entry)) return void problems.push(`${label}: expected an object {id, name, type, body}`);
    const named = typeof entry.name === 'string' ? `${label} ("${entry.name}")` : label;
    if (typeof entry.body !== 'string') return void problems.push(`${named}: "body" must be a string`);
    if (typeof entry.id !== 'string') return void problems.push(`${named}: "id" must be a string`);
    if (entry.type !== undefined && (typeof entry.type !== 'string' || !OPERATION_TYPES.has(entry.type))) {
      return void problems.push(`${named}: "type" must be query, mutation or subscription`);
    }
    const id = sha256Hex(entry.body);
    if (entry.id.toLowerCase() !== id) return void problems.push(`${named}: id ${entry.id} is not the SHA-256 of its body (which is ${id})`);
    const read = readDocument(entry.body, ' of its body');
    if ('problem' in read) return void problems.push(`${named}: ${read.problem}`);
    operations.push({ ...read, id, body: entry.body, name: typeof entry.name === 'string' ? entry.name : read.name });
  });
  return problems.length > 0 ? { problems } : { path, format: 'apollo-persisted-query-manifest', operations };
}

function readRelayMap(path: string, pairs: ReadonlyArray<readonly [string, string]>): OperationFile | { problems: string[] } {
  // `{}` or `[]` is most likely the wrong file (or a generator that found nothing): refused, not "pushed 0".
  if (pairs.length === 0) return { problems: ['holds no operations (an empty Relay query map): nothing to push'] };
  const problems: string[] = [];
  const operations: OperationInput[] = [];
  /** The SHA-256 each Relay id (in its canonical form) was first given for, and how the file spelled it. */
  const seen = new Map<string, { readonly id: string; readonly spelled: string }>();
  for (const [relayId, body] of pairs) {
    const read = readDocument(body, '');
    if ('problem' in read) {
      problems.push(`query ${relayId}: ${read.problem}`);
      continue;
    }
    const id = sha256Hex(body);
    const alias = canonicalAlias(relayId);
    const first = seen.get(alias);
    if (first !== undefined) {
      // The same id for the same text again is harmless; for another text, the client was built with one of them only.
      if (first.id !== id) {
        const spelling = first.spelled === relayId ? '' : ` (also written "${first.spelled}")`;
        problems.push(`Relay id "${relayId}"${spelling} is given twice, for two different texts (operations ${first.id} and ${id}): a Relay id names one operation`);
      }
      continue;
    }
    seen.set(alias, { id, spelled: relayId });
    operations.push({ ...read, id, body, aliases: alias === id ? [] : [alias] });
  }
  return problems.length > 0 ? { problems } : { path, format: 'relay-query-map', operations };
}

/**
 * The id/text pairs of a Relay query map, or undefined when the value is not one. An object's pairs are read
 * from its text, duplicate keys included: `JSON.parse` keeps only the last of two equal keys, which would
 * push one text silently in place of the other.
 */
function relayPairs(json: unknown, text: string): Array<readonly [string, string]> | undefined {
  if (Array.isArray(json)) {
    const pairs: Array<readonly [string, string]> = [];
    for (const item of json) {
      if (!Array.isArray(item) || item.length !== 2 || typeof item[0] !== 'string' || typeof item[1] !== 'string' || item[0] === '') return undefined;
      pairs.push([item[0], item[1]]);
    }
    return pairs;
  }
  if (!isRecord(json)) return undefined;
  const pairs: Array<readonly [string, string]> = [];
  for (const [key, raw] of objectMembers(text)) {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== 'string') return undefined;
    pairs.push([key, value]);
  }
  return pairs;
}

/**
 * The members of the JSON object `text` holds, in order, duplicates included: each key and the raw text of
 * its value. `text` must be valid JSON whose top level is an object (JSON.parse accepted it).
 */
function objectMembers(text: string): Array<readonly [string, string]> {
  const members: Array<readonly [string, string]> = [];
  let at = text.indexOf('{') + 1;
  const skipSpace = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const readString = (): string => {
    const start = at++;
    while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return text.slice(start, at);
  };
  const readValue = (): string => {
    const start = at;
    let depth = 0;
    while (at < text.length) {
      const char = text[at]!;
      if (char === '"') {
        readString();
        continue;
      }
      if (depth === 0 && (char === ',' || char === '}')) break;
      if (char === '{' || char === '[') depth++;
      else if (char === '}' || char === ']') depth--;
      at++;
    }
    return text.slice(start, at);
  };
  for (;;) {
    skipSpace();
    if (text[at] !== '"') return members;
    const key = JSON.parse(readString()) as string;
    skipSpace();
    at++; // the colon
    skipSpace();
    members.push([key, readValue()]);
    if (text[at] === ',') at++;
  }
}

/** Name, type and normalized id of a document, or why it cannot be pushed. */
function readDocument(text: string, where: string): Omit<OperationInput, 'id' | 'body'> | { problem: string } {
  let document: DocumentNode;
  try {
    document = parse(text);
  } catch (error) {
    if (error instanceof GraphQLError) {
      const at = error.locations?.[0];
      return { problem: `GraphQL syntax error${at ? ` at line ${at.line}, column ${at.column}` : ''}${where}: ${error.message.replace(/^Syntax Error: /, '')}` };
    }
    throw error;
  }
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const first = operations[0];
  if (!first) return { problem: `holds no operation${where} (only fragments or type definitions)` };
  const names = operations.map((operation) => operation.name?.value).filter((name): name is string => name !== undefined);
  const normalizedId = sha256Hex(normalizeDocument(document));
  return { name: names.length > 0 ? names.join(', ') : null, type: first.operation as OperationType, normalizedId };
}
