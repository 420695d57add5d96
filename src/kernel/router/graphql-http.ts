/**
 * GraphQL over HTTP on `/graphql`: the one place that decides how a request
 * is read and what status, content type and error body it gets (GET and
 * POST, every body type, batches, the body limit, 405/406/413/415). The
 * JSON POST lane (graphql-post-lane.ts) answers the common request faster
 * and hands everything it is not sure about here; streamed answers
 * (`Accept: text/event-stream` or `multipart/mixed` over a socket) are the
 * streaming endpoint's (subscriptions/streaming-http.ts). The answers are
 * the ones graphql-yoga gave before the router took them over, kept byte for
 * byte (test/kernel/router/graphql-http.test.ts), except where those were
 * unbounded or too lenient: a 406 lists each offered type once, a multipart
 * `map` must be well formed (multipart-body.ts), a body compressed with a
 * coding the router does not decode or in a charset other than UTF-8 is a
 * 415 (body-encoding.ts), and no error quotes the body's text.
 *
 * The request is reached through `GraphQLHttpRequest`, so node's
 * `IncomingMessage` and a fetch `Request` (the router's in-process `handle`)
 * take the same path.
 */
import { GraphQLError } from 'graphql';
import { memoOn } from '../object-memo.js';
import type { OperationRequest, OperationResponse } from '../pipeline/stages.js';
import { BodyDecodingError, bodyEncoding, DecodedBodyTooLargeError, decodeBody, type BodyCoding } from './body-encoding.js';
import { badRequest, jsonSyntaxReason, paramsFromSearch, readParams } from './graphql-params.js';
import { parseMultipart } from './multipart-body.js';
import { operationRequestOf, type GraphQLParams } from './operation-request.js';
import { tooLargeMessage } from './request-body.js';
import { resultContentType, resultFormatFor, resultStatus, type ResultFormat } from './result-head.js';
import { parseClientJson } from './exact-integers.js';

/** A request to `/graphql`, whatever carried it. */
export interface GraphQLHttpRequest {
  readonly method: string;
  /** The query string, without `?`. */
  readonly search: string;
  /** One request header by lower-case name (repeated ones joined with `, `). */
  header(name: string): string | undefined;
  /** Every request header, lower-case names (what the pipeline gets). */
  headers(): Record<string, string>;
  /** The body; undefined when it passed `limit` bytes (reading stopped there). */
  readBody(limit: number): Promise<Buffer | undefined>;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

/** A complete answer; `body` undefined sends none. */
export interface GraphQLHttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer | undefined;
}

export interface GraphQLHttpOptions {
  /** `limits.max_request_body` in bytes. */
  readonly maxBodyBytes: number;
  /** `limits.max_batch_size`; 0 refuses batches. */
  readonly maxBatchSize: number;
  /** `traffic_shaping.router.decompression_enabled`: decode compressed bodies (else 415). */
  readonly decompress: boolean;
  readonly execute: (request: OperationRequest, signal: AbortSignal) => Promise<OperationResponse>;
}

/** How a POST body is read, by its media type. */
type BodyKind = 'json' | 'multipart' | 'graphql' | 'form';

const BODY_KINDS: ReadonlyMap<string, BodyKind> = new Map([
  ['application/json', 'json'],
  ['application/graphql+json', 'json'],
  ['multipart/form-data', 'multipart'],
  ['application/graphql', 'graphql'],
  ['application/x-www-form-urlencoded', 'form'],
]);

/** `Allow` on the errors that say what a request must be. */
const ALLOW_GET_POST = { Allow: 'GET, POST' };

/** Answers one request to `/graphql`. Throws only for the client going away or a router bug. */
export async function answerGraphQL(request: GraphQLHttpRequest, options: GraphQLHttpOptions): Promise<GraphQLHttpAnswer> {
  const format = resultFormatFor(request.header('accept'));
  // The order of these checks decides which error a request with several faults gets (as it always has).
  const declared = request.header('content-length');
  if (declared !== undefined) {
    if (!/^\d+$/.test(declared)) return errorAnswer(badRequest('The Content-Length header is not a number.'), format);
    if (Number(declared) > options.maxBodyBytes) return errorAnswer(tooLarge(options.maxBodyBytes), format);
  }
  const { method } = request;
  if (method !== 'GET' && method !== 'POST') {
    return errorAnswer(requestError('GraphQL only supports GET and POST requests.', 405, { headers: ALLOW_GET_POST }), format);
  }
  const contentType = method === 'POST' ? firstContentType(request.header('content-type')) : undefined;
  const kind = contentType === undefined ? undefined : BODY_KINDS.get(contentType.split(';')[0]!.trim().toLowerCase());
  // Not read at all: no GraphQL answer describes it.
  if (method === 'POST' && kind === undefined) return { status: 415, headers: {}, body: undefined };
  const encoding = contentType === undefined ? undefined : bodyEncoding(contentType, request.header('content-encoding'), options.decompress);
  if (encoding !== undefined && 'refused' in encoding) {
    return format === undefined ? { status: 415, headers: {}, body: undefined } : errorAnswer(requestError(encoding.refused, 415), format);
  }
  // Nothing could be sent back: the body is not read and nothing runs.
  if (format === undefined) return notAcceptable();
  let parsed: unknown;
  try {
    parsed = kind === undefined ? paramsFromSearch(new URLSearchParams(request.search)) : await readBody(request, kind, encoding?.coding, options.maxBodyBytes);
  } catch (error) {
    if (error instanceof GraphQLError) return errorAnswer(error, format);
    throw error;
  }
  if (Array.isArray(parsed)) return answerBatch(request, parsed, format, options);
  const params = checkEntry(parsed);
  if (params instanceof GraphQLError) return errorAnswer(params, format);
  const response = await options.execute(operationRequestOf(params, { headers: request.headers(), method, origin: 'http' }), request.signal);
  return resultAnswer(response, format);
}

/** Runs a batch (`limits.max_batch_size`): one result per entry, in order, answered 200 whatever each entry's fate. */
async function answerBatch(request: GraphQLHttpRequest, entries: unknown[], format: ResultFormat, options: GraphQLHttpOptions): Promise<GraphQLHttpAnswer> {
  if (options.maxBatchSize <= 0) return errorAnswer(requestError('Batching is not supported.', 400), format);
  if (entries.length > options.maxBatchSize) {
    return errorAnswer(requestError(`Batching is limited to ${options.maxBatchSize} operations per request.`, 413), format);
  }
  const headers = request.headers();
  const method = request.method === 'GET' ? 'GET' : 'POST';
  const parts = await Promise.all(
    entries.map(async (entry) => {
      const params = checkEntry(entry);
      if (params instanceof GraphQLError) return errorBody(params);
      const response = await options.execute(operationRequestOf(params, { headers, method, origin: 'http' }), request.signal);
      return serializeResult(response.body).toString();
    }),
  );
  // An entry's own status and headers do not reach the batch's answer.
  return encode(200, format, {}, `[${parts.join(',')}]`);
}

/** One operation's parameters (a whole body, or a batch entry), checked. */
function checkEntry(entry: unknown): GraphQLParams | GraphQLError {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    return requestError(`Expected params to be an object but given ${entry === null ? 'null' : Array.isArray(entry) ? 'array' : typeof entry}.`, 400, {
      headers: ALLOW_GET_POST,
    });
  }
  return readParams(entry as Record<string, unknown>);
}

/** The answer carrying an operation's result. */
function resultAnswer(response: OperationResponse, format: ResultFormat): GraphQLHttpAnswer {
  const body = serializeResult(response.body);
  if (format === 'text/event-stream' || format === 'multipart/mixed') return encode(200, format, {}, body.toString());
  return { status: resultStatus(response, format), headers: { 'content-type': resultContentType(format), ...response.headers }, body };
}

/**
 * A request error's answer: its status (200 for GraphQL over HTTP's legacy
 * `application/json` clients when the error says `spec`), its headers, and
 * the error without its HTTP details.
 */
function errorAnswer(error: GraphQLError, format: ResultFormat | undefined): GraphQLHttpAnswer {
  if (format === undefined) return notAcceptable();
  const http = (error.extensions.http ?? {}) as { status?: number; spec?: boolean; headers?: Record<string, string> };
  const status = http.spec && format === 'application/json' ? 200 : (http.status ?? 400);
  return encode(status, format, http.headers ?? {}, errorBody(error));
}

/** `{"errors":[...]}` for one request error, its `extensions.http` left out. */
function errorBody(error: GraphQLError): string {
  const { http: _http, ...extensions } = error.extensions;
  return JSON.stringify({ errors: [Object.keys(extensions).length > 0 ? { message: error.message, extensions } : { message: error.message }] });
}

/** A JSON body in the chosen format: a single-result event stream or multipart answer for in-process requests that asked for one. */
function encode(status: number, format: ResultFormat, headers: Readonly<Record<string, string>>, json: string): GraphQLHttpAnswer {
  if (format === 'text/event-stream') {
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'content-encoding': 'none' },
      body: `:\n\nevent: next\ndata: ${json}\n\nevent: complete\ndata:\n\n`,
    };
  }
  if (format === 'multipart/mixed') {
    const part = `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
    return { status: 200, headers: { 'content-type': 'multipart/mixed; boundary="-"' }, body: `\r\n---\r\n${part}\r\n-----\r\n` };
  }
  return { status, headers: { 'content-type': resultContentType(format), ...headers }, body: json };
}

/** What the router can answer with, as a 406's `Accept` lists it. */
const OFFERED = 'text/event-stream; charset=utf-8, multipart/mixed; charset=utf-8, application/graphql-response+json; charset=utf-8, application/json';

/**
 * 406: no format the client accepts. `Accept` lists what could have been
 * sent, each type once, however long the request's `Accept` was.
 */
function notAcceptable(): GraphQLHttpAnswer {
  return { status: 406, headers: { accept: OFFERED }, body: undefined };
}

/** The `Content-Type` that counts: a list of types is not valid HTTP, but some clients send one, and the first counts. */
function firstContentType(header: string | undefined): string | undefined {
  return header?.split(',')[0];
}

/** The parsed body: a parameter object, a batch (array), or what the client sent instead (checked by `checkEntry`). */
/** The body as its kind reads it; `limit` bounds the bytes received and, for a compressed body, the bytes decoded. */
async function readBody(request: GraphQLHttpRequest, kind: BodyKind, coding: BodyCoding | undefined, limit: number): Promise<unknown> {
  const received = await request.readBody(limit);
  if (received === undefined) throw tooLarge(limit);
  const bytes = coding === undefined ? received : await decoded(received, coding, limit);
  switch (kind) {
    case 'json':
      return parseJsonBody(bytes);
    case 'graphql':
      return { query: utf8(bytes) };
    case 'form':
      return paramsFromSearch(new URLSearchParams(utf8(bytes)));
    case 'multipart':
      return parseMultipart(bytes, request.header('content-type')!);
  }
}

async function decoded(received: Buffer, coding: BodyCoding, limit: number): Promise<Buffer> {
  try {
    return await decodeBody(received, coding, limit);
  } catch (error) {
    if (error instanceof BodyDecodingError) throw badRequest(error.message);
    if (error instanceof DecodedBodyTooLargeError) throw tooLarge(limit, error.message);
    throw error;
  }
}

function parseJsonBody(bytes: Buffer): unknown {
  let body: unknown;
  try {
    body = parseClientJson(utf8(bytes));
  } catch (error) {
    // The reason says where parsing stopped, never what the body said there.
    throw new GraphQLError('POST body sent invalid JSON.', {
      extensions: { code: 'BAD_REQUEST', originalError: { name: 'SyntaxError', message: jsonSyntaxReason(error) }, http: { status: 400 } },
    });
  }
  if (body === null || typeof body !== 'object') throw badRequest(`POST body is expected to be object but received ${body === null ? 'null' : typeof body}`);
  return body;
}

/** UTF-8 text, a byte-order mark dropped (as the fetch API's `text()` does). */
function utf8(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A request error (code `BAD_REQUEST`) with its HTTP status and headers. */
function requestError(message: string, status: number, http: { headers?: Record<string, string> } = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status, ...http } } });
}

/** 413 `REQUEST_TOO_LARGE`: `limits.max_request_body`. */
function tooLarge(limit: number, message = tooLargeMessage(limit)): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: 'REQUEST_TOO_LARGE', http: { status: 413 } },
  });
}

/** Where a data-only body's data object keeps its JSON: requests that share shaped data share its bytes too. */
const JSON_BYTES = Symbol('switchyard.jsonBytes');

/** A result body's JSON as text or bytes (shared answers have theirs made once). */
export function serializeResult(body: OperationResponse['body']): string | Buffer {
  const data = body.data;
  if (data === null || typeof data !== 'object' || body.errors !== undefined || body.extensions !== undefined || Object.keys(body).length !== 1) {
    return JSON.stringify(body);
  }
  return memoOn(data, JSON_BYTES, () => Buffer.from(JSON.stringify(body)));
}
