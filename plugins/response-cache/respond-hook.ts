import type { StageHook } from '../../src/index.js';
import { mergeCacheControl } from './client-cache-control.js';
import { recordOf, RESPONSE_CACHE } from './request-record.js';

/** The request header that asks for `extensions.responseCache` (when `debug.enabled`). */
export const CACHE_DEBUG_HEADER = 'x-switchyard-cache-debug';

/** Notes a client's request for `extensions.responseCache`. Registered only when `debug.enabled`. */
export const noteDebugRequest: StageHook<'request'> = function noteCacheDebugRequest(event) {
  if (event.input.headers[CACHE_DEBUG_HEADER]?.toLowerCase() === 'true') recordOf(event.state).debug = true;
};

/**
 * Whether a client's request headers ask for a fresh answer: a
 * `Cache-Control` with `no-cache`, or `Pragma: no-cache`. (`max-age=0`,
 * which browsers send on every reload, does not count.)
 */
export function asksForFreshAnswer(headers: Readonly<Record<string, string>>): boolean {
  const directives = (headers['cache-control'] ?? '').toLowerCase().split(',').map((part) => part.trim());
  if (directives.some((directive) => directive === 'no-cache' || directive.startsWith('no-cache='))) return true;
  return (headers.pragma ?? '').toLowerCase().split(',').some((part) => part.trim() === 'no-cache');
}

/** Notes a client's request for a fresh answer (`client_control.enabled`). */
export const noteRefreshRequest: StageHook<'request'> = function noteCacheRefreshRequest(event) {
  if (asksForFreshAnswer(event.input.headers)) recordOf(event.state).refresh = true;
};

/** The request-stage hook for the switches that are on; undefined when none is. */
export function requestHook(debug: boolean, clientControl: boolean): StageHook<'request'> | undefined {
  if (debug && clientControl) {
    return function responseCacheRequest(event) {
      void noteDebugRequest(event);
      void noteRefreshRequest(event);
    };
  }
  if (debug) return noteDebugRequest;
  return clientControl ? noteRefreshRequest : undefined;
}

/**
 * Finishes the client's answer: a `Cache-Control` merged from every
 * subgraph answer (unless something already set one) and, when asked,
 * `extensions.responseCache` with the status of each fetch.
 */
export const finishResponse: StageHook<'respond'> = function responseCacheRespond(event) {
  const record = event.state.get(RESPONSE_CACHE);
  if (!record) return;
  return function addCacheFacts(after) {
    const output = after.output;
    let { headers, body } = output;
    if (headers['cache-control'] === undefined) {
      const value = mergeCacheControl(record.parts, (body.errors?.length ?? 0) > 0);
      if (value !== undefined) headers = { ...headers, 'cache-control': value };
    }
    if (record.debug && !output.requestError) body = { ...body, extensions: { ...body.extensions, responseCache: record.fetches } };
    if (headers !== output.headers || body !== output.body) after.setOutput({ ...output, headers, body });
  };
};
