/**
 * The status line and content type of a single (non-streamed) GraphQL result
 * over HTTP, decided here for both ways an answer is written: the post lane
 * (graphql-post-lane.ts) and the general handler (graphql-http.ts).
 */
import type { OperationResponse } from '../pipeline/stages.js';

/** Media types a single GraphQL result can be sent as; when one `Accept` entry matches both, the first listed here wins. */
const RESULT_TYPES = ['application/json', 'application/graphql-response+json'] as const;
export type ResultType = (typeof RESULT_TYPES)[number];

/**
 * The status a result is sent with. A request error (the document or the
 * parameters were refused before execution) sent as `application/json` is
 * 200: GraphQL over HTTP's legacy-client rule. Everything else keeps the
 * pipeline's status (`application/graphql-response+json` semantics).
 */
export function resultStatus(response: OperationResponse, type: ResultType | undefined): number {
  return response.requestError && type === 'application/json' ? 200 : response.status;
}

/** The `Content-Type` of a result sent as `type`. */
export function resultContentType(type: ResultType): string {
  return `${type}; charset=utf-8`;
}

/**
 * What an answer is sent as: a single result's media type, or (for the
 * in-process `handle`, whose requests never reach the streaming endpoint)
 * one result as an event stream or multipart answer.
 */
export type ResultFormat = ResultType | 'text/event-stream' | 'multipart/mixed';

/**
 * The format for `Accept`: a single result's type when one fits; else
 * multipart, else an event stream, when the client takes that; undefined: 406.
 */
export function resultFormatFor(accept: string | undefined): ResultFormat | undefined {
  const type = resultTypeFor(accept);
  if (type !== undefined || !accept) return type;
  const asked = utf8MediaTypes(accept);
  if (asked.some((entry) => matches(entry, 'multipart/mixed'))) return 'multipart/mixed';
  if (asked.some((entry) => matches(entry, 'text/event-stream'))) return 'text/event-stream';
  return undefined;
}

/**
 * The media type a single result is answered with, reading `Accept` as the
 * router always has (whitespace dropped, lower case, non-utf-8 charsets
 * skipped, quality values ignored, the first listed entry that matches wins,
 * and `application/json` when it matches both); undefined when none fits (406).
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
  for (const mediaType of utf8MediaTypes(accept || '*/*')) {
    for (const type of RESULT_TYPES) if (matches(mediaType, type)) return type;
  }
  return undefined;
}

/** `Accept`'s media types in order (whitespace dropped, lower case), those asking for a charset other than utf-8 left out. */
function utf8MediaTypes(accept: string): string[] {
  const types: string[] = [];
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset === 'charset=utf-8' && mediaType !== undefined) types.push(mediaType);
  }
  return types;
}

/** Whether an `Accept` media type (`*` wildcards allowed) covers `type`. */
function matches(asked: string, type: string): boolean {
  const [pre, suf] = asked.split('/');
  const [typePre, typeSuf] = type.split('/');
  return (pre === '*' || pre === typePre) && (suf === '*' || suf === typeSuf);
}
