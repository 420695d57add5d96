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
import { unreadableBodyReason } from '../router/body-encoding.js';
import { paramsFromSearch, readParams } from '../router/graphql-params.js';
import { operationRequestOf as toOperationRequest, type GraphQLParams } from '../router/operation-request.js';
import { readNodeBody, tooLargeMessage } from '../router/request-body.js';

/** How an HTTP request to `/graphql` wants its answer streamed. */
export type StreamingProtocol =
  /** GraphQL over SSE, distinct connections mode (`Accept: text/event-stream`). */
  | 'sse'
  /** Apollo's multipart subscriptions (`Accept: multipart/mixed;subscriptionSpec="1.0"`). */
  | 'multipart'
  /** `multipart/mixed` with a `subscriptionSpec` other than 1.0: answered 406. */
  | 'multipart-unsupported';

/**
 * The protocol the first streaming media type of `Accept` names, or
 * undefined when a plain JSON media type comes first (or none is named):
 * then the request is an ordinary GraphQL over HTTP request. `multipart/mixed`
 * without `subscriptionSpec` (incremental delivery) is left to GraphQL over HTTP too.
 */
export function streamingProtocolOf(accept: string | undefined): StreamingProtocol | undefined {
  if (!accept) return undefined;
  for (const entry of accept.split(',')) {
    const [type, ...params] = entry.split(';').map((part) => part.trim());
    const media = type!.toLowerCase();
    const parameters = new Map<string, string>();
    for (const param of params) {
      const at = param.indexOf('=');
      if (at > 0)
        parameters.set(
          param.slice(0, at).trim().toLowerCase(),
          param
            .slice(at + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1'),
        );
    }
    // q=0 (also 0.0, 0.000) marks a type not acceptable (RFC 9110 12.4.2).
    const q = parameters.get('q');
    if (q !== undefined && /^0(?:\.0{0,3})?$/.test(q)) continue;
    if (media === 'text/event-stream') return 'sse';
    if (media === 'multipart/mixed' && parameters.has('subscriptionspec')) {
      return parameters.get('subscriptionspec') === '1.0' ? 'multipart' : 'multipart-unsupported';
    }
    if (media === 'application/json' || media === 'application/graphql-response+json' || media === '*/*') return undefined;
  }
  return undefined;
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
export async function readGraphQLParams(req: IncomingMessage, maxBodyBytes: number): Promise<ParamsOutcome> {
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
    const unreadable = unreadableBodyReason(req.headers['content-type']!, req.headers['content-encoding']);
    if (unreadable !== undefined) return { ok: false, status: 415, message: unreadable };
    const body = await readNodeBody(req, maxBodyBytes);
    // The rest stays unread: the refusal closes the connection (streaming-http.ts).
    if (body === undefined) return { ok: false, status: 413, message: tooLargeMessage(maxBodyBytes) };
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
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
  if (!res.writable || res.write(chunk)) return;
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

/** A JSON error body as every GraphQL over HTTP answer writes it. */
export function errorBody(message: string, code: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}
