/**
 * The common request, answered without graphql-yoga: a JSON `POST /graphql`
 * with one operation. Yoga's per-request machinery (fetch-API request and
 * response objects, its plugin chain, promise helpers) cost more than a
 * cached plan's whole execution, so this lane parses the body, runs the
 * operation and writes the answer straight to the socket. It answers
 * exactly as yoga would (same status, headers and body); every request it
 * is not sure about (batches, other content types, odd `Accept` headers,
 * bad or unknown parameters, bodies without a length) goes to yoga, which
 * keeps its errors and edge cases in one place.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationRequest, OperationResponse } from '../pipeline/stages.js';
import { clientNameOf } from './client-name.js';

/** Media types a single (non-streamed) GraphQL result can be sent as; when one `Accept` entry matches both, yoga picks the last. */
const RESULT_TYPES = ['application/json', 'application/graphql-response+json'] as const;
type ResultType = (typeof RESULT_TYPES)[number];

/** Body fields a GraphQL request may carry (GraphQL over HTTP, plus persisted document ids). */
const KNOWN_PARAMS = new Set(['query', 'variables', 'operationName', 'extensions', 'documentId', 'doc_id']);

/** What the lane needs from the server. */
export interface PostLaneOptions {
  /** `limits.max_request_body` in bytes. */
  readonly maxBodyBytes: number;
  readonly execute: (request: OperationRequest, signal: AbortSignal) => Promise<OperationResponse>;
  /** The response body's JSON as text or bytes (shared answers have theirs made once). */
  readonly serialize: (body: OperationResponse['body']) => string | Buffer;
  /** Hands a request the lane declined to yoga, with the body already read (undefined: not read yet). */
  readonly fallback: (req: IncomingMessage, res: ServerResponse, body: Buffer | undefined) => Promise<void>;
}

/** Whether a request may take the lane, judged from its head alone. */
export function postLaneCandidate(req: IncomingMessage, maxBodyBytes: number): boolean {
  if (req.method !== 'POST' || req.url !== '/graphql') return false;
  const type = req.headers['content-type'];
  if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) return false;
  const length = req.headers['content-length'];
  return length !== undefined && /^\d+$/.test(length) && Number(length) <= maxBodyBytes && resultTypeFor(req.headers.accept) !== undefined;
}

/** Answers a candidate request (see `postLaneCandidate`), or hands it to yoga. */
export async function answerPost(req: IncomingMessage, res: ServerResponse, options: PostLaneOptions): Promise<void> {
  const bytes = await readBody(req);
  const params = paramsOf(bytes);
  if (!params) return options.fallback(req, res, bytes);
  const resultType = resultTypeFor(req.headers.accept)!;
  const headers = requestHeaders(req.rawHeaders);
  const operation: OperationRequest = {
    query: params.query,
    operationName: params.operationName,
    variables: params.variables,
    extensions: params.extensions,
    documentId: params.documentId,
    headers,
    method: 'POST',
    clientName: clientNameOf(headers),
    origin: 'http',
  };
  const aborted = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) aborted.abort();
  };
  res.once('close', onClose);
  const response = await options.execute(operation, aborted.signal);
  res.off('close', onClose);
  if (res.destroyed) return;
  const body = options.serialize(response.body);
  // Yoga's rule: request errors sent to an `application/json` client are 200 (GraphQL over HTTP's legacy mode).
  const status = response.requestError && resultType === 'application/json' ? 200 : response.status;
  res.writeHead(status, {
    'Content-Type': `${resultType}; charset=utf-8`,
    'content-length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
    ...response.headers,
  });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

interface PostParams {
  readonly query: string | undefined;
  readonly operationName: string | undefined;
  readonly variables: Record<string, unknown> | undefined;
  readonly extensions: Record<string, unknown> | undefined;
  readonly documentId: string | undefined;
}

/** The request's parameters when they are plainly valid; undefined leaves every judgement to yoga. */
function paramsOf(bytes: Buffer): PostParams | undefined {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isPlainObject(body)) return undefined;
  for (const key in body) if (!KNOWN_PARAMS.has(key)) return undefined;
  const { query, operationName, variables, extensions } = body;
  const rawId = body.documentId ?? body.doc_id;
  // Yoga answers a document id that is not a non-empty string (graphql-params.ts), as it does every other bad parameter.
  if (rawId != null && (typeof rawId !== 'string' || rawId === '')) return undefined;
  if (body.documentId != null && body.doc_id != null) return undefined;
  const documentId = typeof rawId === 'string' ? rawId : undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (variables != null && !isPlainObject(variables)) return undefined;
  if (extensions != null && !isPlainObject(extensions)) return undefined;
  if (typeof query === 'string' ? query === '' : query != null || (extensions == null && documentId === undefined)) return undefined;
  return {
    query: typeof query === 'string' ? query : undefined,
    operationName: operationName ?? undefined,
    variables: variables ?? undefined,
    extensions: extensions ?? undefined,
    documentId,
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The media type yoga would answer a single result with, following its
 * reading of `Accept` (whitespace dropped, lower case, non-utf-8 charsets
 * skipped, quality values ignored, the first listed entry that matches
 * wins, and `application/json` when it matches both); undefined when none fits.
 */
export function resultTypeFor(accept: string | undefined): ResultType | undefined {
  const key = accept ?? '';
  if (knownAccepts.has(key)) return knownAccepts.get(key);
  const type = readAccept(accept);
  // Clients send a handful of distinct Accept values; bounded anyway, as clients choose them.
  if (knownAccepts.size >= 64) knownAccepts.clear();
  knownAccepts.set(key, type);
  return type;
}

/** `resultTypeFor` answers by Accept value. */
const knownAccepts = new Map<string, ResultType | undefined>();

function readAccept(accept: string | undefined): ResultType | undefined {
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',');
  for (const entry of asked) {
    const [mediaType, ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8' || mediaType === undefined) continue;
    const [pre, suf] = mediaType.split('/');
    for (const type of RESULT_TYPES) {
      const [typePre, typeSuf] = type.split('/');
      if ((pre === '*' || pre === typePre) && (suf === '*' || suf === typeSuf)) return type;
    }
  }
  return undefined;
}

/** Request headers as the fetch API reports them: lower-case names, repeated ones joined with `, `. */
function requestHeaders(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const known = headers[name];
    headers[name] = known === undefined ? value : `${known}, ${value}`;
  }
  return headers;
}
