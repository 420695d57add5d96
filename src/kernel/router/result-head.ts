/**
 * The status line and content type of a single (non-streamed) GraphQL result
 * over HTTP, decided here for both ways an answer is written: the post lane
 * (graphql-post-lane.ts) and yoga's path (http-server.ts `routerBridge`).
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
 * The media type a single result is answered with, as yoga reads `Accept`
 * (whitespace dropped, lower case, non-utf-8 charsets skipped, quality values
 * ignored, the first listed entry that matches wins, and `application/json`
 * when it matches both); undefined when none fits (406).
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
