/**
 * The common request, answered in the fewest steps: a JSON `POST /graphql`
 * with one operation and a declared length. The lane reads the body, runs
 * the operation and writes the answer straight to the socket, with no
 * request object of its own. It answers exactly as the general handler
 * (graphql-http.ts) would; every request it is not sure about (batches,
 * other content types, odd `Accept` headers, bad parameters, bodies without
 * a length) goes there, with the body already read. What the two share is
 * not copied: parameters are read by `readParams` (graphql-params.ts),
 * converted by `operationRequestOf` (operation-request.ts), and answered
 * with the status and content type of result-head.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import type { OperationRequest, OperationResponse } from '../pipeline/stages.js';
import { isPlainObject, readParams } from './graphql-params.js';
import { headersFromRaw, operationRequestOf, type GraphQLParams } from './operation-request.js';
import { readNodeBody } from './request-body.js';
import { sendAnswer, type ResponseCompression } from './response-compression.js';
import { resultContentType, resultStatus, resultTypeFor } from './result-head.js';
import { parseClientJson } from './exact-integers.js';

/** What the lane needs from the server. */
export interface PostLaneOptions {
  /** `limits.max_request_body` in bytes. */
  readonly maxBodyBytes: number;
  /** gzip for answers (`traffic_shaping.router`); undefined: off. */
  readonly compression: ResponseCompression | undefined;
  readonly execute: (request: OperationRequest, signal: AbortSignal) => Promise<OperationResponse>;
  /** The response body's JSON as text or bytes (shared answers have theirs made once). */
  readonly serialize: (body: OperationResponse['body']) => string | Buffer;
  /** Hands a request the lane declined to the general handler, with the body already read. */
  readonly fallback: (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>;
}

/** `application/json`, at most with a UTF-8 charset: other parameters, and other charsets (415), are the general handler's. */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i;

/** Whether a request may take the lane, judged from its head alone. A compressed body (415) is the general handler's. */
export function postLaneCandidate(req: IncomingMessage, maxBodyBytes: number): boolean {
  if (req.method !== 'POST' || req.url !== '/graphql' || req.headers['content-encoding'] !== undefined) return false;
  const type = req.headers['content-type'];
  if (type === undefined || !PLAIN_JSON.test(type)) return false;
  const length = req.headers['content-length'];
  return length !== undefined && /^\d+$/.test(length) && Number(length) <= maxBodyBytes && resultTypeFor(req.headers.accept) !== undefined;
}

/** Answers a candidate request (see `postLaneCandidate`), or hands it to the general handler. */
export async function answerPost(req: IncomingMessage, res: ServerResponse, options: PostLaneOptions): Promise<void> {
  const bytes = await readNodeBody(req, options.maxBodyBytes);
  // Cannot happen: the head declared a length within the limit, and node's parser delivers no byte past it.
  if (bytes === undefined) throw new Error('The post lane read a body past its declared length.');
  const params = paramsOf(bytes);
  if (!params) return options.fallback(req, res, bytes);
  const resultType = resultTypeFor(req.headers.accept)!;
  const operation = operationRequestOf(params, { headers: headersFromRaw(req.rawHeaders), method: 'POST', origin: 'http' });
  const aborted = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) aborted.abort();
  };
  res.once('close', onClose);
  const response = await options.execute(operation, aborted.signal);
  res.off('close', onClose);
  if (res.destroyed) return;
  const headers = { 'Content-Type': resultContentType(resultType), ...response.headers };
  await sendAnswer(res, resultStatus(response, resultType), headers, options.serialize(response.body), options.compression);
}

/** The body's parameters when they are valid; undefined leaves the answer (an error, a batch) to the general handler. */
function paramsOf(bytes: Buffer): GraphQLParams | undefined {
  let body: unknown;
  try {
    body = parseClientJson(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isPlainObject(body)) return undefined;
  const params = readParams(body);
  return params instanceof GraphQLError ? undefined : params;
}
