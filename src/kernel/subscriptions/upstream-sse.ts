/**
 * A subgraph subscription over Server-Sent Events (GraphQL over SSE,
 * distinct connections mode, as graphql-yoga, graphql-sse and Cosmo's
 * subgraphs serve it): `protocol: sse` sends the operation as GET query
 * parameters, `sse_post` as a JSON POST; both ask `Accept: text/event-stream`
 * with the header rules' output for the subgraph. Each `next` event (or an
 * unnamed `data:` event) is one result; `complete`, or the end of the stream,
 * completes the subscription; `return()` aborts the request.
 *
 * One event may be at most the subgraph's `traffic_shaping` `max_response_body`
 * (as its HTTP answers): a subgraph sending a larger one (or a line without
 * end) is cut off with `SUBSCRIPTION_UPSTREAM_FAILED`, and of an error
 * answer only the first 64 KiB are read (upstream-sse-bounds.ts). The
 * GraphQL errors of an error answer reach the client only as
 * `subgraph_error_propagation` lets them (upstream-errors.ts).
 */
import { createParser } from 'eventsource-parser';
import type { CoreConfig, SubgraphErrorPropagationConfig } from '../config/core-schema.js';
import type { SubgraphResponse } from '../fetch/subgraph-types.js';
import { forwardedUpstreamErrors } from './upstream-errors.js';
import { UpstreamEvents } from './upstream-events.js';
import { ERROR_BODY_BYTES, PendingEventBytes, readCapped } from './upstream-sse-bounds.js';
import { upstreamFailed, type UpstreamSubscription, type UpstreamTarget } from './upstream-ws.js';

/** `ws(s)://` becomes `http(s)://`: the settings may name the WebSocket URL of a subgraph that serves both. */
export function httpUrl(url: string): string {
  return url.replace(/^ws(s?):\/\//i, (_match, secure: string) => `http${secure}://`);
}

/** The request the subscription is opened with. */
function requestOf(target: UpstreamTarget, signal: AbortSignal): { url: string; init: RequestInit } {
  const headers: Record<string, string> = { ...target.headers, accept: 'text/event-stream' };
  const params = { query: target.query, operationName: target.operationName, variables: target.variables };
  if (target.settings.protocol === 'sse') {
    const url = new URL(httpUrl(target.settings.url));
    url.searchParams.set('query', params.query);
    if (params.operationName) url.searchParams.set('operationName', params.operationName);
    if (Object.keys(params.variables).length > 0) url.searchParams.set('variables', JSON.stringify(params.variables));
    return { url: url.toString(), init: { method: 'GET', headers, signal } };
  }
  headers['content-type'] = 'application/json';
  return { url: httpUrl(target.settings.url), init: { method: 'POST', headers, body: JSON.stringify(params), signal } };
}

/** The largest event the subgraph may send: its `max_response_body` (`traffic_shaping.subgraphs.<name>`, else `.all`). */
export function maxEventBytesOf(shaping: CoreConfig['traffic_shaping'], subgraph: string): number {
  return shaping.subgraphs[subgraph]?.max_response_body ?? shaping.all.max_response_body;
}

/** `max_response_body`'s default, for callers without a config. */
const DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024;

export function subscribeUpstreamSse(target: UpstreamTarget, maxEventBytes = DEFAULT_MAX_EVENT_BYTES, errorPropagation?: SubgraphErrorPropagationConfig): UpstreamSubscription {
  const { subgraph } = target;
  const controller = new AbortController();
  const events = new UpstreamEvents();
  const finish = (error?: ReturnType<typeof upstreamFailed>): void => {
    events.finish(error);
    controller.abort();
  };

  const parser = createParser({
    onEvent(message) {
      if (events.ended) return;
      if (message.event === 'complete') {
        finish();
        return;
      }
      if (message.event !== undefined && message.event !== 'next') return;
      let event: unknown;
      try {
        event = JSON.parse(message.data);
      } catch {
        finish(upstreamFailed(subgraph, 'the subgraph sent an event that is not JSON'));
        return;
      }
      if (event === null || typeof event !== 'object' || Array.isArray(event)) {
        finish(upstreamFailed(subgraph, 'the subgraph sent an event that is not a GraphQL result'));
        return;
      }
      events.push(event as SubgraphResponse, Buffer.byteLength(message.data));
    },
  });

  void (async () => {
    const { url, init } = requestOf(target, controller.signal);
    const response = await fetch(url, init);
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !type.toLowerCase().startsWith('text/event-stream')) {
      const text = response.body ? await readCapped(response.body, ERROR_BODY_BYTES).catch(() => '') : '';
      const errors = forwardedUpstreamErrors(subgraph, errorsIn(text), errorPropagation);
      finish(upstreamFailed(subgraph, `the subgraph answered ${response.status} (${type || 'no content type'}) instead of an event stream`, errors));
      return;
    }
    if (!response.body) {
      finish();
      return;
    }
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    const pending = new PendingEventBytes();
    for (;;) {
      // A subgraph sending faster than the router delivers is held back by TCP (upstream-events.ts).
      await events.room();
      if (events.ended) break;
      const { done, value } = await reader.read();
      if (done || events.ended) break;
      if (pending.add(value) > maxEventBytes) {
        // Checked before the parser buffers the chunk; finish() aborts the request, so the rest is never read.
        finish(upstreamFailed(subgraph, `the subgraph sent an event larger than ${maxEventBytes} bytes (its traffic_shaping max_response_body)`));
        parser.reset();
        break;
      }
      parser.feed(decoder.decode(value, { stream: true }));
    }
    // The stream ended without `complete`: the subgraph is done too.
    finish();
  })().catch((error: unknown) => {
    if (events.ended) return;
    finish(upstreamFailed(subgraph, error instanceof Error ? causeOf(error) : String(error)));
  });

  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    finish();
    events.clear();
  };
  return events.subscription(close);
}

/** fetch's "fetch failed" says little; its cause (ECONNREFUSED, ...) says what happened. */
function causeOf(error: Error): string {
  const cause = error.cause;
  return cause instanceof Error && cause.message ? `${error.message}: ${cause.message}` : error.message;
}

/** The `errors` list of a JSON answer, if it is one (as sent: forwardedUpstreamErrors checks its entries). */
function errorsIn(text: string): unknown[] | undefined {
  try {
    const body = JSON.parse(text) as { errors?: unknown } | null;
    return Array.isArray(body?.errors) ? body.errors : undefined;
  } catch {
    return undefined;
  }
}
