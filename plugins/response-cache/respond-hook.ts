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
