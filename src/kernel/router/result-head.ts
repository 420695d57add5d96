/**
 * The status line and content type of a single (non-streamed) GraphQL result
 * over HTTP, decided here for both ways an answer is written: the post lane
 * (graphql-post-lane.ts) and the general handler (graphql-http.ts).
 */
import type { OperationResponse } from '../pipeline/stages.js';
import { acceptRanges, firstAcceptable, perAcceptValue, qualityOf } from './accept-ranges.js';

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
  const ranges = acceptRanges(accept);
  if (firstAcceptable(ranges, 'multipart/mixed') >= 0) return 'multipart/mixed';
  if (firstAcceptable(ranges, 'text/event-stream') >= 0) return 'text/event-stream';
  return undefined;
}

/**
 * The media type a single result is answered with, by `Accept` (RFC 9110
 * 12.5.1): each type takes the quality of the most specific range that
 * covers it, `q=0` meaning "not acceptable"; the highest quality wins, then
 * the type of the first listed range, then `application/json` (when one
 * wildcard range covers both). Ranges asking for a charset other than utf-8
 * are left out. Undefined when no type is acceptable (406).
 */
export function resultTypeFor(accept: string | undefined): ResultType | undefined {
  return readAccept(accept ?? '');
}

const readAccept = perAcceptValue((accept: string): ResultType | undefined => {
  const ranges = acceptRanges(accept || '*/*');
  let best: { type: ResultType; q: number; first: number } | undefined;
  for (const type of RESULT_TYPES) {
    const q = qualityOf(ranges, type);
    const first = firstAcceptable(ranges, type);
    // Strictly better only: on a tie the earlier of RESULT_TYPES stays.
    if (q > 0 && (best === undefined || q > best.q || (q === best.q && first < best.first))) best = { type, q, first };
  }
  return best?.type;
});
