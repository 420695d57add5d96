/**
 * What the HTTP streaming protocols (Server-Sent Events, multipart) share:
 * choosing the protocol from `Accept`, reading the GraphQL parameters of a
 * GET or JSON POST with the router's body limit, and building the kernel's
 * operation request from the HTTP request's headers (so the authentication
 * plugin's request hook sees the same `Authorization` header as for a query).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationRequest } from '../pipeline/stages.js';
import { operationRequestOf as toOperationRequest, type GraphQLParams } from '../router/operation-request.js';

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
    if (parameters.get('q') === '0') continue;
    if (media === 'text/event-stream') return 'sse';
    if (media === 'multipart/mixed' && parameters.has('subscriptionspec')) {
      return parameters.get('subscriptionspec') === '1.0' ? 'multipart' : 'multipart-unsupported';
    }
    if (media === 'application/json' || media === 'application/graphql-response+json' || media === '*/*') return undefined;
  }
  return undefined;
}

/** The GraphQL parameters of a request, or the 4xx answer to a request that has none usable. */
export type ParamsOutcome =
  | { readonly ok: true; readonly params: GraphQLParams }
  | { readonly ok: false; readonly status: number; readonly message: string; readonly headers?: Readonly<Record<string, string>> };

export type { GraphQLParams };

/** Reads a body up to `limit` bytes; undefined when it is larger (the rest is not read). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The parameters of a GET (query string) or a JSON POST; other methods and bodies get 405 / 415 / 413 / 400. */
export async function readGraphQLParams(req: IncomingMessage, maxBodyBytes: number): Promise<ParamsOutcome> {
  let raw: Record<string, unknown>;
  if (req.method === 'GET') {
    const search = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    raw = {};
    for (const name of ['query', 'operationName', 'documentId', 'doc_id'] as const) {
      const value = search.get(name);
      if (value !== null) raw[name] = value;
    }
    for (const name of ['variables', 'extensions'] as const) {
      const value = search.get(name);
      if (value === null || value === '') continue;
      try {
        raw[name] = JSON.parse(value);
      } catch {
        return { ok: false, status: 400, message: `The "${name}" parameter is not valid JSON.` };
      }
    }
  } else if (req.method === 'POST') {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json' && type !== 'application/graphql+json') {
      return { ok: false, status: 415, message: 'A streamed GraphQL request must be a GET or an application/json POST.' };
    }
    const body = await readBody(req, maxBodyBytes);
    if (body === undefined) return { ok: false, status: 413, message: 'The request body is too large.' };
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
  return checkParams(raw);
}

function checkParams(raw: Record<string, unknown>): ParamsOutcome {
  const optionalString = (name: string): string | undefined | false => {
    const value = raw[name];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'string' ? value : false;
  };
  const optionalObject = (name: string): Record<string, unknown> | undefined | false => {
    const value = raw[name];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : false;
  };
  const query = optionalString('query');
  const operationName = optionalString('operationName');
  const documentId = optionalString('documentId') ?? optionalString('doc_id');
  const variables = optionalObject('variables');
  const extensions = optionalObject('extensions');
  for (const [name, value] of [
    ['query', query],
    ['operationName', operationName],
    ['documentId', documentId],
    ['variables', variables],
    ['extensions', extensions],
  ] as const) {
    if (value === false) return { ok: false, status: 400, message: `The "${name}" parameter has the wrong type.` };
  }
  if (query === undefined && documentId === undefined && extensions === undefined) {
    return { ok: false, status: 400, message: 'The request has no "query" (nor a persisted operation).' };
  }
  return {
    ok: true,
    params: {
      query: query || undefined,
      operationName: operationName || undefined,
      variables: variables || undefined,
      extensions: extensions || undefined,
      documentId: documentId || undefined,
    },
  };
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
