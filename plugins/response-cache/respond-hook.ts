import { privateAnswer, type StageEvent, type StageHook } from '../../src/index.js';
import { mergeCacheControl } from './client-cache-control.js';
import { CACHE_REFRESH_KEY_HEADER, type ClientControl } from './client-control.js';
import type { PrivateEntries } from './private-entries.js';
import { recordOf, RESPONSE_CACHE, type ResponseCacheRecord } from './request-record.js';

/** The request header that asks for `extensions.responseCache` (when `debug.enabled`). */
export const CACHE_DEBUG_HEADER = 'x-switchyard-cache-debug';

/** Value of `X-Switchyard-Cache-Debug` that adds the per-fetch counts (hits, misses, time saved) to each item. */
export const CACHE_DEBUG_DETAIL = 'detail';

/** Notes a client's request for `extensions.responseCache` (`true`, or `detail` for the counts too). */
function noteDebugRequest(headers: Readonly<Record<string, string>>, record: () => ResponseCacheRecord): void {
  const value = headers[CACHE_DEBUG_HEADER]?.toLowerCase();
  if (value === 'true') record().debug = true;
  else if (value === CACHE_DEBUG_DETAIL) Object.assign(record(), { debug: true, detail: true });
}

/**
 * Whether a client's request headers ask for a fresh answer: a
 * `Cache-Control` with `no-cache`, or `Pragma: no-cache`. (`max-age=0`,
 * which browsers send on every reload, does not count.)
 */
export function asksForFreshAnswer(headers: Readonly<Record<string, string>>): boolean {
  const directives = (headers['cache-control'] ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((directive) => directive === 'no-cache' || directive.startsWith('no-cache='))) return true;
  return (headers.pragma ?? '')
    .toLowerCase()
    .split(',')
    .some((part) => part.trim() === 'no-cache');
}

/** What the request stage of the response cache looks at. */
export interface RequestHookSettings {
  /** `debug.enabled`. */
  readonly debug: boolean;
  /** `client_control`, when enabled. */
  readonly clientControl: ClientControl | undefined;
  /** `private_entries`, when enabled with `user_header` (a claim is read later, from request state). */
  readonly privateEntries: PrivateEntries | undefined;
}

/** The request-stage hook for the switches that are on; undefined when none needs one. */
export function requestHook(settings: RequestHookSettings): StageHook<'request'> | undefined {
  const { debug, clientControl, privateEntries } = settings;
  const byHeader = privateEntries && 'header' in privateEntries.source ? privateEntries : undefined;
  if (!debug && !clientControl && !byHeader) return undefined;
  return function responseCacheRequest(event) {
    const headers = event.input.headers;
    const record = () => recordOf(event.state);
    if (debug) noteDebugRequest(headers, record);
    if (byHeader) byHeader.noteRequest(headers, record());
    if (!clientControl) return;
    const refusal = clientControl.check(headers);
    if (refusal) {
      event.respondWith(refusal);
      return;
    }
    if (asksForFreshAnswer(headers) && clientControl.allows(headers)) record().refresh = true;
    if (headers[CACHE_REFRESH_KEY_HEADER] !== undefined) dropRefreshKey(event);
  };
}

/**
 * Takes the refresh key out of the request once read: it is the router's
 * secret, and header rules (`propagate matching ".*"`) or later plugins
 * would otherwise pass it on to subgraphs. Subgraph requests and
 * subscription connections are built from the request as request hooks
 * left it.
 */
function dropRefreshKey(event: StageEvent<'request'>): void {
  const { [CACHE_REFRESH_KEY_HEADER]: _dropped, ...headers } = event.input.headers;
  event.setInput({ ...event.input, headers });
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
      const value = mergeCacheControl(record.parts, (body.errors?.length ?? 0) > 0, after.state.get(privateAnswer) === true);
      if (value !== undefined) headers = { ...headers, 'cache-control': value };
    }
    if (record.debug && !output.requestError) body = { ...body, extensions: { ...body.extensions, responseCache: debugItems(record) } };
    if (headers !== output.headers || body !== output.body) after.setOutput({ ...output, headers, body });
  };
};

/** The `extensions.responseCache` items: `{subgraph, kind, status}`, with `detail` also the counts. */
function debugItems(record: ResponseCacheRecord): object[] {
  if (record.detail) return record.fetches;
  return record.fetches.map(({ subgraph, kind, status }) => ({ subgraph, kind, status }));
}
