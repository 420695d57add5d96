/**
 * What the HTTP streaming protocols (Server-Sent Events, multipart) share:
 * choosing the protocol from `Accept`, reading the GraphQL parameters of a
 * GET or JSON POST with the router's body limit, and building the kernel's
 * operation request from the HTTP request's headers (so the authentication
 * plugin's request hook sees the same `Authorization` header as for a query).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import type { OperationRequest } from '../pipeline/stages.js';
import { BodyDecodingError, bodyEncoding, DecodedBodyTooLargeError, decodeBody } from '../router/body-encoding.js';
import { acceptRanges, firstAcceptable, perAcceptValue, qualityOf } from '../router/accept-ranges.js';
import { resultTypeFor } from '../router/result-head.js';
import { paramsFromSearch, readParams } from '../router/graphql-params.js';
import { operationRequestOf as toOperationRequest, type GraphQLParams } from '../router/operation-request.js';
import { readNodeBody, tooLargeMessage } from '../router/request-body.js';
import { parseClientJson } from '../router/exact-integers.js';

/** How an HTTP request to `/graphql` wants its answer streamed. */
export type StreamingProtocol =
  /** GraphQL over SSE, distinct connections mode (`Accept: text/event-stream`). */
  | 'sse'
  /** Apollo's multipart subscriptions (`Accept: multipart/mixed;subscriptionSpec="1.0"`). */
  | 'multipart'
  /** Nothing in `Accept` fits but `multipart/mixed` with a `subscriptionSpec` other than 1.0: answered 406. */
  | 'multipart-unsupported';

/**
 * The protocol `Accept` asks an answer to be streamed with, or undefined for
 * an ordinary GraphQL over HTTP request. Every range of `Accept` competes by
 * quality (RFC 9110 12.5.1): the single-result JSON types the router serves
 * (as `resultTypeFor` chooses and ranks them, wildcards included) against
 * the streaming types, named exactly (`text/event-stream`, `multipart/mixed`
 * with `subscriptionSpec="1.0"`). The highest
 * quality wins, then the first listed range; `q=0` means "not acceptable".
 * `multipart/mixed` without `subscriptionSpec` (incremental delivery) is left to GraphQL
 * over HTTP, and a `subscriptionSpec` other than 1.0 is refused only when
 * nothing else fits.
 */
export function streamingProtocolOf(accept: string | undefined): StreamingProtocol | undefined {
  if (!accept) return undefined;
  // Most requests name no streaming type: nothing to weigh.
  if (!/text\/event-stream|multipart\/mixed/i.test(accept)) return undefined;
  return negotiated(accept);
}

const negotiated = perAcceptValue(negotiate);

function negotiate(accept: string): StreamingProtocol | undefined {
  const ranges = acceptRanges(accept);
  let stream: { protocol: StreamingProtocol; q: number; first: number } | undefined;
  let unknownSpec = false;
  ranges.forEach((range, index) => {
    if (range.q === 0) return;
    let protocol: StreamingProtocol;
    if (range.mediaType === 'text/event-stream') protocol = 'sse';
    else if (range.mediaType === 'multipart/mixed') {
      const spec = range.params.get('subscriptionspec');
      // Without subscriptionSpec it is incremental delivery (@defer clients send a plain multipart/mixed): GraphQL over HTTP's.
      if (spec === undefined) return;
      if (spec !== undefined && spec !== '1.0') {
        unknownSpec = true;
        return;
      }
      protocol = 'multipart';
    } else return;
    // Strictly better only: on a tie the first listed stays.
    if (stream === undefined || range.q > stream.q) stream = { protocol, q: range.q, first: index };
  });
  // The JSON type a single result would be sent as (result-head.ts decides it, so the two never disagree), and how much the client wants it.
  const json = resultTypeFor(accept);
  if (stream === undefined) return json === undefined && unknownSpec ? 'multipart-unsupported' : undefined;
  if (json === undefined) return stream.protocol;
  const q = qualityOf(ranges, json);
  const first = firstAcceptable(ranges, json);
  return stream.q > q || (stream.q === q && stream.first < first) ? stream.protocol : undefined;
}

/** The refusal of a multipart (file upload) request that asks for a streamed answer. */
export const UPLOADS_STREAMED_MESSAGE =
  'File uploads are not supported for subscriptions: a multipart/form-data request cannot be answered as a stream (Accept: text/event-stream or multipart/mixed;subscriptionSpec="1.0"), and no subgraph subscription protocol can carry a file. Send files with a query or mutation, answered as JSON.';

/** The GraphQL parameters of a request, or the 4xx answer to a request that has none usable. */
export type ParamsOutcome =
  | { readonly ok: true; readonly params: GraphQLParams }
  | {
      readonly ok: false;
      readonly status: number;
      readonly message: string;
      readonly headers?: Readonly<Record<string, string>>;
      /** `extensions.code` of the refusal; default by status (streaming-http.ts). */
      readonly code?: string;
    };

export type { GraphQLParams };

/**
 * The parameters of a GET (query string) or a JSON POST; other methods and
 * bodies get 405 / 415 / 413 / 400 (a file upload: 400
 * `SUBSCRIPTION_NOT_SUPPORTED`). The parameters themselves are read and
 * checked by the router's one parameter reader (router/graphql-params.ts), as for queries.
 */
export async function readGraphQLParams(req: IncomingMessage, maxBodyBytes: number, decompress: boolean): Promise<ParamsOutcome> {
  let raw: Record<string, unknown>;
  if (req.method === 'GET') {
    try {
      raw = paramsFromSearch(new URLSearchParams((req.url ?? '').split('?')[1] ?? ''));
    } catch (error) {
      if (error instanceof GraphQLError) return refusalOf(error);
      throw error;
    }
  } else if (req.method === 'POST') {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    // File uploads (the GraphQL multipart request spec): a streamed answer is a subscription's, and no subgraph
    // subscription protocol carries files. Refused unread (the connection closes), before anything runs.
    if (type === 'multipart/form-data') return { ok: false, status: 400, message: UPLOADS_STREAMED_MESSAGE, code: 'SUBSCRIPTION_NOT_SUPPORTED' };
    if (type !== 'application/json' && type !== 'application/graphql+json') {
      return { ok: false, status: 415, message: 'A streamed GraphQL request must be a GET or an application/json POST.' };
    }
    const encoding = bodyEncoding(req.headers['content-type']!, req.headers['content-encoding'], decompress);
    if ('refused' in encoding) return { ok: false, status: 415, message: encoding.refused };
    const received = await readNodeBody(req, maxBodyBytes);
    let body: Buffer | undefined;
    try {
      body = received === undefined || encoding.coding === undefined ? received : await decodeBody(received, encoding.coding, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyDecodingError) return { ok: false, status: 400, message: error.message };
      if (error instanceof DecodedBodyTooLargeError) return { ok: false, status: 413, message: error.message };
      throw error;
    }
    // The rest stays unread: the refusal closes the connection (streaming-http.ts).
    if (body === undefined) return { ok: false, status: 413, message: tooLargeMessage(maxBodyBytes) };
    let parsed: unknown;
    try {
      parsed = parseClientJson(body.toString('utf8'));
    } catch {
      return { ok: false, status: 400, message: 'The request body is not valid JSON.' };
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return { ok: false, status: 400, message: 'The request body must be a JSON object (batches cannot be streamed).' };
    }
    raw = parsed as Record<string, unknown>;
  } else {
    return { ok: false, status: 405, message: `Method ${req.method ?? ''} is not allowed here.`, headers: { allow: 'GET, POST' } };
  }
  const params = readParams(raw);
  return params instanceof GraphQLError ? refusalOf(params) : { ok: true, params };
}

/** A parameter reader's 400 as a refusal of the stream. */
function refusalOf(error: GraphQLError): ParamsOutcome {
  const http = error.extensions.http as { headers?: Record<string, string> } | undefined;
  return { ok: false, status: 400, message: error.message, headers: http?.headers };
}

/** The kernel's request for streamed GraphQL parameters: the HTTP request's own headers, as for any HTTP operation. */
export function operationRequestOf(req: IncomingMessage, params: GraphQLParams): OperationRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return toOperationRequest(params, { headers, method: req.method === 'GET' ? 'GET' : 'POST', origin: 'http' });
}

/**
 * Writes a chunk of a streamed answer; when the client reads slower than
 * events come, waits until it caught up (or left) before the next event, so
 * a slow reader holds up its own stream instead of filling the router's memory.
 */
export async function writeChunk(res: ServerResponse, chunk: string): Promise<void> {
  if (!canWrite(res) || res.write(chunk)) return;
  // Refused because the connection is gone: no `drain` or `close` is coming any more.
  if (res.destroyed) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Whether a streamed answer can still be written. Node 20 leaves
 * `res.writable` true after the client's connection is gone (then `write()`
 * returns false and no `drain` follows); `destroyed` says so.
 */
export function canWrite(res: ServerResponse): boolean {
  return res.writable && !res.destroyed;
}

/** A JSON error body as every GraphQL over HTTP answer writes it. */
export function errorBody(message: string, code: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}
