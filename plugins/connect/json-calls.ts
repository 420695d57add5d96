/**
 * The Connect protocol's unary JSON form, answered directly: POST with an
 * `application/json` body, GET with `encoding=json&message=...`. This is
 * the form most clients use (curl, browsers, CDNs in front of GET), so it
 * skips the protobuf message round trip of the other encodings: the answer
 * is written from the converted `data` as it is.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { promisify } from 'node:util';
import { brotliDecompress as brotliDecompressCallback, gunzip as gunzipCallback, type ZlibOptions } from 'node:zlib';
import { fromBinary, fromJson, toBinary, type JsonObject, type JsonValue } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Logger, RouterHandle } from '../../src/index.js';
import { connectTimeoutOf } from './call-deadline.js';
import { callOperation, forwardedHeaders } from './call-operation.js';
import { asFailure, ConnectFailure, errorAnswer, invalidArgument } from './connect-errors.js';
import type { GetMessage, MessageCompression } from './get-message.js';
import { binaryWithinDepth, DECODER_RECURSION_LIMIT, decodeUtf8, jsonWithinDepth, tooDeep } from './message-depth.js';
import type { MethodEntry } from './method-table.js';
import { readBody } from './read-body.js';

const gunzip = promisify<Buffer, ZlibOptions, Buffer>(gunzipCallback);
const brotliDecompress = promisify<Buffer, ZlibOptions, Buffer>(brotliDecompressCallback);

/** A request of either HTTP version. */
export type AnyRequest = IncomingMessage | Http2ServerRequest;
/** A response of either HTTP version. */
export type AnyResponse = ServerResponse | Http2ServerResponse;

/** What the JSON calls need. */
export interface JsonCallContext {
  readonly router: RouterHandle;
  /** Largest request body, in bytes (`limits.max_request_body`). */
  readonly maxBody: number;
  /** The plugin's logger (unexpected errors). */
  readonly log: Logger;
}

/** Writes a Connect error answer; an unexpected error is logged and answered as `internal`. */
export function sendFailure(res: AnyResponse, error: unknown, log: Logger): void {
  // A client that went away mid-request (reset, aborted body) is not the router's failure.
  if (res.destroyed || clientWentAway(error)) {
    log.debug({ err: error }, 'Connect call ended by the client');
    return;
  }
  if (!(error instanceof ConnectError)) log.error({ err: error }, 'Connect call failed');
  const answer = errorAnswer(asFailure(error));
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

/** Socket errors of a peer that closed or reset the connection while its request was read. */
function clientWentAway(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error instanceof Error && error.message === 'aborted');
}

function headerEntries(req: AnyRequest): Array<[string, string]> {
  return Object.entries(req.headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value] as [string, string]]));
}

function parseMessage(entry: MethodEntry, text: string): Record<string, unknown> {
  let parsed: JsonValue;
  try {
    parsed = text.trim() === '' ? {} : (JSON.parse(text) as JsonValue);
  } catch (error) {
    throw invalidArgument(`malformed JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidArgument(`the message must be a JSON object of the ${entry.method.input.name} fields`);
  if (!jsonWithinDepth(parsed)) throw tooDeep(entry.method.input);
  try {
    return fromJson(entry.method.input, parsed, { recursionLimit: DECODER_RECURSION_LIMIT }) as unknown as Record<string, unknown>;
  } catch (error) {
    throw invalidArgument(error instanceof Error ? error.message : String(error));
  }
}

/** A request message in protobuf's binary form (any protocol); what does not decode is the client's mistake. */
export function parseBinaryMessage(entry: MethodEntry, bytes: Uint8Array): Record<string, unknown> {
  if (!binaryWithinDepth(entry.method.input, bytes)) throw tooDeep(entry.method.input);
  try {
    return fromBinary(entry.method.input, bytes, { recursionLimit: DECODER_RECURSION_LIMIT }) as unknown as Record<string, unknown>;
  } catch (error) {
    throw invalidArgument(`malformed ${entry.method.input.name} message: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** How a call's messages travel: JSON, or protobuf's binary encoding. */
interface Encoding {
  readonly contentType: string;
  parse(entry: MethodEntry, body: Buffer): Record<string, unknown>;
  write(entry: MethodEntry, json: Record<string, unknown>): string | Uint8Array;
}

const JSON_ENCODING: Encoding = {
  contentType: 'application/json',
  parse: (entry, body) => parseMessage(entry, decodeUtf8(body)),
  write: (_entry, json) => JSON.stringify(json),
};

const PROTO_ENCODING: Encoding = {
  contentType: 'application/proto',
  parse: (entry, body) => parseBinaryMessage(entry, body),
  write: (entry, json) => toBinary(entry.method.output, fromJson(entry.method.output, json as JsonObject)),
};

/** Encoded answers by message: a message shared between calls (see call-operation.ts) is encoded once. */
const encoded = new WeakMap<object, { readonly encoding: Encoding; readonly body: string | Uint8Array }>();

function encodedMessage(encoding: Encoding, entry: MethodEntry, json: Record<string, unknown>): string | Uint8Array {
  const known = encoded.get(json);
  if (known?.encoding === encoding) return known.body;
  const body = encoding.write(entry, json);
  encoded.set(json, { encoding, body });
  return body;
}

async function run(context: JsonCallContext, entry: MethodEntry, req: AnyRequest, res: AnyResponse, input: Buffer, httpMethod: 'GET' | 'POST', encoding: Encoding): Promise<void> {
  const timeoutMs = connectTimeoutOf(req);
  const message = encoding.parse(entry, input);
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const deadline = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const signal = deadline ? AbortSignal.any([gone.signal, deadline]) : gone.signal;
  try {
    const out = await callOperation(context.router, entry, { message, headers: forwardedHeaders(headerEntries(req)), httpMethod, signal });
    const body = encodedMessage(encoding, entry, out.json as Record<string, unknown>);
    res.writeHead(200, { 'content-type': encoding.contentType, 'content-length': typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength, ...out.headers });
    res.end(body);
  } catch (error) {
    if (deadline?.aborted) throw new ConnectFailure(Code.DeadlineExceeded, `the call did not finish within Connect-Timeout-Ms (${timeoutMs}ms)`);
    throw error;
  }
}

/** `Content-Encoding` of a request body answered here. */
export type BodyCompression = MessageCompression;

function tooLarge(maxBody: number): ConnectFailure {
  return new ConnectFailure(Code.ResourceExhausted, `request body larger than ${maxBody} bytes (limits.max_request_body)`);
}

/** A compressed body's (or GET message's) bytes, at most `maxBody` of them once decompressed (as connect-node bounds them). */
async function decompressed(body: Buffer, compression: BodyCompression, maxBody: number, what = 'the body'): Promise<Buffer> {
  if (compression === 'identity') return body;
  try {
    return await (compression === 'gzip' ? gunzip : brotliDecompress)(body, { maxOutputLength: maxBody });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBody);
    throw invalidArgument(`${what} does not decompress as ${compression}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Answers a Connect unary POST with a JSON body, or a binary one (`application/proto`) when `binary`. */
export async function answerJsonPost(
  context: JsonCallContext,
  entry: MethodEntry,
  req: AnyRequest,
  res: AnyResponse,
  binary = false,
  compression: BodyCompression = 'identity',
): Promise<void> {
  try {
    const body = await readBody(req, context.maxBody);
    if (body === undefined) throw tooLarge(context.maxBody);
    await run(context, entry, req, res, await decompressed(body, compression, context.maxBody), 'POST', binary ? PROTO_ENCODING : JSON_ENCODING);
  } catch (error) {
    sendFailure(res, error, context.log);
  }
}

/** Answers a Connect unary GET, JSON or binary, plain or compressed (its message read by get-message.ts). */
export async function answerJsonGet(context: JsonCallContext, entry: MethodEntry, req: AnyRequest, res: AnyResponse, message: GetMessage): Promise<void> {
  try {
    const bytes = await decompressed(message.bytes, message.compression, context.maxBody, 'the message');
    await run(context, entry, req, res, bytes, 'GET', message.binary ? PROTO_ENCODING : JSON_ENCODING);
  } catch (error) {
    sendFailure(res, error, context.log);
  }
}
