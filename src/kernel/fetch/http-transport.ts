import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { Agent, FormData, errors as undiciErrors } from 'undici';
import { RouterError } from '../errors.js';
import type { JsonObject, SubgraphRequest, SubgraphResponse, Transport } from './subgraph-types.js';
import { uploadCount, uploadsIn, variablesJson } from './variables-json.js';

/** Options of the HTTP transport of one subgraph. */
export interface HttpTransportOptions {
  /** Subgraph URL (`http://host:port/graphql`). */
  readonly url: string;
  /** Give up after this many milliseconds (`traffic_shaping`). */
  readonly timeoutMs: number;
  /** Keep-alive connection pool, shared by every subgraph. */
  readonly agent: Agent;
  /** Largest response body accepted, in bytes. Default: 64 MiB. */
  readonly maxResponseBytes?: number;
}

/** A keep-alive pool for subgraph connections. */
export function createSubgraphAgent(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256, pipelining: 1 });
}

/**
 * GraphQL over HTTP POST to a subgraph, through a shared keep-alive pool.
 * No answer (refused, reset, timed out, not 2xx without a GraphQL body)
 * throws a RouterError with a code users can act on. A call whose variables
 * carry uploaded files (multipart-body.ts) is sent as a GraphQL multipart
 * request instead of JSON (`multipartBody`).
 */
export function createHttpTransport({ url, timeoutMs, agent, maxResponseBytes = 64 * 1024 * 1024 }: HttpTransportOptions): Transport {
  // Parsed once: handing undici a URL string re-parses it on every call.
  const target = new URL(url);
  const origin = target.origin;
  const path = `${target.pathname}${target.search}`;
  return async function sendToSubgraph(subgraphRequest: SubgraphRequest, signal: AbortSignal): Promise<SubgraphResponse> {
    // Spliced by hand: the variables' text is usually made already for the single-flight key.
    const operationName = subgraphRequest.operationName === undefined ? '' : `,"operationName":${JSON.stringify(subgraphRequest.operationName)}`;
    const json = `{"query":${JSON.stringify(subgraphRequest.query)}${operationName},"variables":${variablesJson(subgraphRequest.variables)}}`;
    // Counted while the variables' text was written: one property read for a call without files.
    const uploads = uploadCount(subgraphRequest.variables);
    const body = uploads === 0 ? json : multipartBody(json, subgraphRequest, uploads);
    const headers = uploads === 0 ? { ...subgraphRequest.headers, ...REQUEST_HEADERS } : multipartHeaders(subgraphRequest.headers);
    // One controller and one timer per call: AbortSignal.timeout/any cost far more on the hot path.
    const deadline = new Deadline(timeoutMs, signal);
    try {
      let response;
      try {
        response = await agent.request({
          origin,
          path,
          method: 'POST',
          headers,
          body,
          signal: deadline.signal,
        });
      } catch (error) {
        throw transportError(subgraphRequest.subgraph, error, deadline.expired, timeoutMs);
      }
      let text: string;
      try {
        const declared = Number(response.headers['content-length'] ?? 0);
        if (declared > maxResponseBytes) {
          response.body.destroy();
          throw tooLarge(subgraphRequest.subgraph, maxResponseBytes);
        }
        text = await readLimited(response.body, maxResponseBytes, subgraphRequest.subgraph);
      } catch (error) {
        if (error instanceof RouterError) throw error;
        throw transportError(subgraphRequest.subgraph, error, deadline.expired, timeoutMs);
      }
      const parsed = parseBody(text);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      if (!parsed) {
        if (!ok) throw httpError(subgraphRequest.subgraph, response.statusCode);
        throw new RouterError('SUBGRAPH_INVALID_RESPONSE', `Subgraph "${subgraphRequest.subgraph}" sent a response that is not GraphQL JSON.`);
      }
      if (!ok && parsed.data === undefined && parsed.errors === undefined) throw httpError(subgraphRequest.subgraph, response.statusCode);
      return { ...parsed, headers: flatHeaders(response.headers) };
    } finally {
      deadline.clear();
    }
  };
}

const REQUEST_HEADERS = { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' } as const;

/**
 * A call carrying uploaded files as the GraphQL multipart request spec sends
 * it: `operations` (the JSON body, `null` where each file was), `map` (each
 * file part's paths in it) and the file parts, each file once, with the
 * name and type the client sent. Made for each attempt (a retry sends a
 * new one); undici writes it with its length and the boundary in `Content-Type`.
 */
function multipartBody(json: string, request: SubgraphRequest, uploads: number): FormData {
  const files = uploadsIn(request.variables, uploads, request.subgraph);
  const map: Record<string, string[]> = {};
  const form = new FormData();
  form.append('operations', json);
  let part = 0;
  for (const paths of files.values()) map[part++] = paths;
  form.append('map', JSON.stringify(map));
  part = 0;
  for (const file of files.keys()) form.append(String(part++), file, partFilename(file.name));
  return form;
}

/**
 * A file name as a part header may carry it: no line breaks or other
 * control characters. A quote stays: undici writes it `%22`, as browsers
 * do, so the subgraph reads the name a browser upload would have given it.
 */
function partFilename(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f]/g, '');
}

/** The headers of a multipart call: the header rules' without their `Content-Type` and `Content-Length` (undici sets both for the form). */
function multipartHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const name in headers) if (name !== 'content-type' && name !== 'content-length') sent[name] = headers[name]!;
  sent.accept = REQUEST_HEADERS.accept;
  // Apollo Server's CSRF prevention (on by default) refuses multipart bodies without a preflight header.
  sent['apollo-require-preflight'] = 'true';
  return sent;
}

/**
 * The call's deadline, which also follows the caller's signal. It is the
 * signal undici gets: undici takes an EventEmitter with `aborted` and
 * `reason` as well as an AbortSignal, and an emitter costs a fraction of an
 * AbortController (an EventTarget) to make, listen to and drop, once per
 * subgraph call.
 */
class Deadline extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  expired = false;
  private readonly timer: NodeJS.Timeout;
  private readonly outer: AbortSignal;
  private readonly onOuterAbort = (): void => this.abort(this.outer.reason);

  constructor(ms: number, outer: AbortSignal) {
    super();
    this.outer = outer;
    this.timer = setTimeout(() => {
      this.expired = true;
      this.abort(undefined);
    }, ms);
    if (outer.aborted) this.abort(outer.reason);
    else outer.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  get signal(): Deadline {
    return this;
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }

  clear(): void {
    clearTimeout(this.timer);
    this.outer.removeEventListener('abort', this.onOuterAbort);
  }
}

/** Response headers as one string each (repeated ones joined), lower-case names. */
function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  for (const value of Object.values(headers)) {
    if (typeof value !== 'string') {
      const flat: Record<string, string> = {};
      for (const [name, raw] of Object.entries(headers)) {
        if (typeof raw === 'string') flat[name] = raw;
        else if (Array.isArray(raw)) flat[name] = raw.join(', ');
      }
      return flat;
    }
  }
  return headers as Record<string, string>;
}

function tooLarge(subgraph: string, limit: number): RouterError {
  return new RouterError('SUBGRAPH_INVALID_RESPONSE', `Subgraph "${subgraph}" sent a response larger than ${limit} bytes.`);
}

/** Reads a body as text, giving up (and dropping the connection) past `limit` bytes. */
function readLimited(body: Readable, limit: number, subgraph: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.destroy();
        reject(tooLarge(subgraph, limit));
        return;
      }
      chunks.push(chunk);
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8')));
    body.once('error', reject);
  });
}

function parseBody(text: string): { data?: JsonObject | null; errors?: SubgraphResponse['errors']; extensions?: JsonObject } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const object = value as Record<string, unknown>;
  const result: { data?: JsonObject | null; errors?: SubgraphResponse['errors']; extensions?: JsonObject } = {};
  if ('data' in object) {
    const data = object.data;
    if (data !== null && (typeof data !== 'object' || Array.isArray(data))) return undefined;
    result.data = data as JsonObject | null;
  }
  if (object.errors !== undefined) {
    if (!Array.isArray(object.errors)) return undefined;
    result.errors = object.errors.map((e: unknown) =>
      e !== null && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string'
        ? (e as NonNullable<SubgraphResponse['errors']>[number])
        : { message: 'Subgraph sent a malformed error.' },
    );
  }
  if (object.extensions !== null && typeof object.extensions === 'object' && !Array.isArray(object.extensions)) {
    result.extensions = object.extensions as JsonObject;
  }
  return result;
}

function httpError(subgraph: string, status: number): RouterError {
  return new RouterError('SUBGRAPH_REQUEST_FAILED', `Subgraph "${subgraph}" answered with HTTP ${status}.`, {
    extensions: { http: { status } },
  });
}

function transportError(subgraph: string, error: unknown, expired: boolean, timeoutMs: number): RouterError {
  if (expired || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return new RouterError('SUBGRAPH_TIMEOUT', `Subgraph "${subgraph}" did not answer within ${timeoutMs}ms.`, { cause: error });
  }
  const reason = error instanceof Error ? ((error as Error & { code?: string }).code ?? error.message) : String(error);
  return new RouterError('SUBGRAPH_REQUEST_FAILED', `Request to subgraph "${subgraph}" failed: ${reason}.`, { cause: error });
}
