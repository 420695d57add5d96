/**
 * Reading a request's GraphQL parameters strictly: whatever a client sends,
 * a bad parameter is a 400 `BAD_REQUEST` naming it, never a server error.
 * `paramsFromSearch` reads a query string or form body (a malformed
 * `variables` or `extensions` named), `readParams` checks a parameter
 * object, for every way a request arrives (graphql-http.ts, the post lane,
 * the streaming endpoint).
 */
import { GraphQLError } from 'graphql';
import type { GraphQLParams } from './operation-request.js';
import { parseClientJson } from './exact-integers.js';

/** A 400 `BAD_REQUEST` about the request's parameters. */
export function badRequest(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
}

/** Parameter names of a persisted document id: GraphQL over HTTP's, and Relay's. */
const DOCUMENT_ID_PARAMS = ['documentId', 'doc_id'] as const;

/** The GraphQL parameters of a query string or form body. */
export function paramsFromSearch(search: URLSearchParams): Record<string, unknown> {
  const params: Record<string, unknown> = {
    query: search.get('query') || undefined,
    operationName: search.get('operationName') || undefined,
    variables: jsonParam(search, 'variables'),
    extensions: jsonParam(search, 'extensions'),
  };
  // Persisted document ids (GraphQL over HTTP's `documentId`, Relay's `doc_id`) over GET too.
  for (const name of DOCUMENT_ID_PARAMS) {
    const value = search.get(name);
    if (value !== null) params[name] = value;
  }
  return params;
}

function jsonParam(search: URLSearchParams, name: 'variables' | 'extensions'): unknown {
  const text = search.get(name);
  if (!text) return undefined;
  try {
    return parseClientJson(text);
  } catch (error) {
    throw badRequest(`The "${name}" parameter is not valid JSON: ${jsonSyntaxReason(error)}. Send it as a JSON object, URL-encoded.`);
  }
}

/**
 * V8's own `JSON.parse` messages that quote none of the input: a fixed text
 * and where parsing stopped. Its other messages (`Unexpected token 'x', "..."
 * is not valid JSON`) copy the client's text, and no error repeats that.
 */
const QUOTES_NO_INPUT = /^(?:Unexpected end of JSON input|(?!Unexpected token)[A-Za-z ',{}[\]-]{1,80} at position \d{1,10}(?: \(line \d{1,10} column \d{1,10}\))?)$/;

/** Why `JSON.parse` refused a client's text, saying where when it can, without quoting the text. */
export function jsonSyntaxReason(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (QUOTES_NO_INPUT.test(message)) return message;
  const position = / at position (\d{1,10})/.exec(message)?.[1];
  return position === undefined ? 'Unexpected token in JSON' : `Unexpected token in JSON at position ${position}`;
}

/** Parameter names a GraphQL request may carry: GraphQL over HTTP's, plus persisted document ids. */
const KNOWN_PARAMS = new Set(['query', 'variables', 'operationName', 'extensions', 'documentId', 'doc_id']);

/** `Allow` on the parameter errors that say what a request must carry (as they have always been answered). */
const ALLOW = { Allow: 'GET, POST' };

/**
 * The one reader of a GraphQL request's parameter object, whatever carried it
 * (a JSON body, a batch entry, a GET query string through `paramsFromSearch`):
 * the checked parameters, or the 400 naming the first bad one. A request
 * without `query` is a persisted operation when it has `extensions` (for
 * `persistedQuery`) or a document id; the pipeline's plugins supply its text.
 */
export function readParams(fields: Readonly<Record<string, unknown>>): GraphQLParams | GraphQLError {
  const { query, operationName, variables, extensions, documentId: id, doc_id: relayId } = fields;
  if (operationName != null && typeof operationName !== 'string') {
    return badRequest(`Expected "operationName" param to be a string, but given ${describe(operationName)}.`);
  }
  // Unrolled, not a loop over DOCUMENT_ID_PARAMS: this runs on every request of the post lane.
  if (id != null && (typeof id !== 'string' || id === '')) return badRequest(`Expected "documentId" param to be a non-empty string, but given ${describe(id)}.`);
  if (relayId != null && (typeof relayId !== 'string' || relayId === '')) return badRequest(`Expected "doc_id" param to be a non-empty string, but given ${describe(relayId)}.`);
  for (const name in fields) {
    if (fields[name] != null && !KNOWN_PARAMS.has(name)) return badRequest(`Unexpected parameter "${bounded(name)}" in the request body.`);
  }
  // The one reading of the id, for every entry: GraphQL over HTTP's `documentId`, else Relay's `doc_id`.
  const documentId = (id ?? relayId ?? undefined) as string | undefined;
  if (query == null) {
    // Legacy-mode clients (`application/json`) get this one with 200, as GraphQL over HTTP asks.
    if (!extensions && documentId === undefined) return paramError('Must provide query string.', { spec: true, headers: ALLOW });
  } else if (typeof query !== 'string') {
    return paramError(`Expected "query" param to be a string, but given ${typeName(query)}.`, { headers: ALLOW });
  }
  if (variables != null && !isPlainObject(variables)) {
    return paramError(`Expected "variables" param to be empty or an object, but given ${typeName(variables)}.`, { headers: ALLOW });
  }
  if (extensions != null && !isPlainObject(extensions)) {
    return paramError(`Expected "extensions" param to be empty or an object, but given ${typeName(extensions)}.`, { headers: ALLOW });
  }
  return {
    query: (query as string | undefined) || undefined,
    operationName: (operationName as string | undefined) ?? undefined,
    variables: (variables as Record<string, unknown> | undefined) ?? undefined,
    extensions: (extensions as Record<string, unknown> | undefined) ?? undefined,
    documentId,
  };
}

/** A 400 `BAD_REQUEST` with extra HTTP details: `spec` (200 for `application/json` clients), headers. */
function paramError(message: string, http: { spec?: boolean; headers?: Record<string, string> }): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400, ...http } } });
}

/** A JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A client's parameter name as an error quotes it: at most 100 characters. */
function bounded(name: string): string {
  return name.length > 100 ? `${name.slice(0, 100)}…` : name;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === '') return 'an empty string';
  return typeof value;
}
