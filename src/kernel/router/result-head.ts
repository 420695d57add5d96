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
  const ranges = acceptedRanges(accept).filter((range) => range.q > 0);
  if (ranges.some((range) => matches(range.mediaType, 'multipart/mixed'))) return 'multipart/mixed';
  if (ranges.some((range) => matches(range.mediaType, 'text/event-stream'))) return 'text/event-stream';
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

/** One range of `Accept`: its media type (lower case, `*` wildcards) and quality (0 to 1). */
interface AcceptedRange {
  readonly mediaType: string;
  readonly q: number;
}

function readAccept(accept: string | undefined): ResultType | undefined {
  const ranges = acceptedRanges(accept || '*/*');
  let best: { type: ResultType; q: number; first: number } | undefined;
  for (const type of RESULT_TYPES) {
    const q = qualityOf(ranges, type);
    const first = ranges.findIndex((range) => range.q > 0 && matches(range.mediaType, type));
    // Strictly better only: on a tie the earlier of RESULT_TYPES stays.
    if (q > 0 && (best === undefined || q > best.q || (q === best.q && first < best.first))) best = { type, q, first };
  }
  return best?.type;
}

/** How much the client wants `type`: the quality of the most specific range covering it (the first of equals), 0 when none does. */
function qualityOf(ranges: readonly AcceptedRange[], type: string): number {
  let q = 0;
  let specificity = -1;
  for (const range of ranges) {
    if (!matches(range.mediaType, type)) continue;
    const rank = range.mediaType === '*/*' ? 0 : range.mediaType.endsWith('/*') ? 1 : 2;
    if (rank > specificity) {
      specificity = rank;
      q = range.q;
    }
  }
  return q;
}

/** A quality value as RFC 9110 writes it (`0`, `0.5`, `1.000`); anything else counts as 1. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** `Accept`'s ranges in order (whitespace dropped, lower case), those asking for a charset other than utf-8 left out. */
function acceptedRanges(accept: string): AcceptedRange[] {
  const ranges: AcceptedRange[] = [];
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...params] = entry.split(';');
    const charset = params
      .find((param) => param.startsWith('charset='))
      ?.slice(8)
      .replace(/^"(.*)"$/, '$1');
    if ((charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') || mediaType === undefined) continue;
    const q = params.find((param) => param.startsWith('q='))?.slice(2);
    ranges.push({ mediaType, q: q !== undefined && QVALUE.test(q) ? Number(q) : 1 });
  }
  return ranges;
}

/** Whether an `Accept` media type (`*` wildcards allowed) covers `type`. */
function matches(asked: string, type: string): boolean {
  const [pre, suf] = asked.split('/');
  const [typePre, typeSuf] = type.split('/');
  return (pre === '*' || pre === typePre) && (suf === '*' || suf === typeSuf);
}
