/**
 * Streamed answers on `/graphql` of the main listener: Server-Sent Events
 * (sse-server.ts) and multipart (multipart-server.ts), chosen by `Accept`.
 * Each request carries one operation through the router's pipeline with the
 * request's own headers; subscriptions stream, anything else gets one event.
 * The HTTP server hands a request here when `wants` says so, after CORS and
 * CSRF prevention ran.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import type { OperationRequest } from '../pipeline/stages.js';
import { closeIfBodyPending } from '../router/request-body.js';
import { resultContentType, resultTypeFor } from '../router/result-head.js';
import { ClientBuffer, clientTooSlowMessage } from './client-buffer.js';
import { httpEventSource, type HttpEventSource } from './http-event-source.js';
import { errorBody, operationRequestOf, readGraphQLParams, streamingProtocolOf } from './http-stream-request.js';
import { writeMultipart } from './multipart-server.js';
import { writeSse } from './sse-server.js';
import type { StartedOperation } from './subscription-runner.js';

export interface StreamingHttpOptions {
  readonly log: Logger;
  /** Starts one operation (subscriptions stream; the rest answer once). */
  readonly start: (request: OperationRequest, signal: AbortSignal, buffer: ClientBuffer) => Promise<StartedOperation>;
  /** `subscriptions.max_total`; 0 = no limit. */
  readonly maxTotal: number;
  /** Subscriptions counted toward `maxTotal` elsewhere (WebSocket). Default: none. */
  readonly othersActive?: () => number;
  /** `limits.max_request_body`. */
  readonly maxBodyBytes: number;
  /** `traffic_shaping.router.decompression_enabled`: decode compressed bodies (else 415). Default: true. */
  readonly decompress?: boolean;
  /** `subscriptions.max_queued_bytes`: data queued for one response before its stream ends with an error; 0 = no limit. Default: 0. */
  readonly maxQueuedBytes?: number;
  /** Interval of multipart heartbeats; default the protocol's 5 s (tests shorten it). */
  readonly multipartHeartbeatMs?: number;
}

export interface StreamingHttpEndpoint {
  /** Whether `Accept` asks for a streamed answer (the request is then this endpoint's). */
  wants(req: IncomingMessage): boolean;
  /** Answers the request; never throws for anything the client sent. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Streams open now. */
  readonly active: number;
  /** Ends every stream (SSE: `complete`; multipart: the closing boundary) and refuses new ones. */
  close(): Promise<void>;
}

/**
 * The type of a refusal's JSON body: `application/graphql-response+json`
 * when the client prefers it (Apollo Client 4 lists it beside multipart,
 * and reads a non-2xx `application/json` answer as a bare server error
 * without its GraphQL errors), else `application/json`.
 */
function refusalType(accept: string | undefined): { 'content-type': string } {
  return { 'content-type': resultContentType(resultTypeFor(accept) ?? 'application/json') };
}

/** How long a response dropped for reading too slowly may take to read its last event before it is cut. */
export const SLOW_CLIENT_GRACE_MS = 10_000;

export function createStreamingHttpEndpoint(options: StreamingHttpOptions): StreamingHttpEndpoint {
  const open = new Set<HttpEventSource>();
  let starting = 0;
  let closing = false;

  const refuse = (res: ServerResponse, status: number, message: string, code: string, headers: Record<string, string> = {}): void => {
    // A refused request's unread body is not drained: the connection closes instead.
    closeIfBodyPending(res.req, res);
    res.writeHead(status, { ...refusalType(headerText(res.req.headers.accept)), ...headers });
    res.end(errorBody(message, code));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const protocol = streamingProtocolOf(headerText(req.headers.accept));
    if (protocol === 'multipart-unsupported') {
      refuse(res, 406, 'Only subscriptionSpec="1.0" of multipart subscriptions is served.', 'BAD_REQUEST');
      return;
    }
    if (closing) {
      refuse(res, 503, 'The router is shutting down.', 'GRAPH_NOT_READY');
      return;
    }
    const params = await readGraphQLParams(req, options.maxBodyBytes, options.decompress ?? true);
    if (!params.ok) {
      const code = params.code ?? (params.status === 413 ? 'REQUEST_TOO_LARGE' : 'BAD_REQUEST');
      refuse(res, params.status, params.message, code, params.headers);
      return;
    }
    if (options.maxTotal > 0 && open.size + starting + (options.othersActive?.() ?? 0) >= options.maxTotal) {
      refuse(res, 429, `The router serves ${options.maxTotal} streamed operations (subscriptions.max_total).`, 'SUBSCRIPTION_LIMIT_EXCEEDED');
      return;
    }
    const controller = new AbortController();
    res.once('close', () => controller.abort());
    // Past `subscriptions.max_queued_bytes` the stream ends with an error (its queued events dropped at once).
    let source: HttpEventSource | undefined;
    const limit = options.maxQueuedBytes ?? 0;
    const buffer = new ClientBuffer(
      limit,
      () => unsentBytes(res),
      (queued) => {
        options.log.warn({ queued_bytes: queued, limit }, 'Ending a streamed subscription whose client reads too slowly');
        source?.fail([{ message: clientTooSlowMessage(limit), extensions: { code: 'SUBSCRIPTION_CLIENT_TOO_SLOW' } }]);
        // A client that does not read that last event either is cut off.
        setTimeout(() => {
          if (!res.writableFinished) res.destroy();
        }, SLOW_CLIENT_GRACE_MS).unref();
      },
    );
    starting++;
    let started: StartedOperation;
    try {
      started = await options.start(operationRequestOf(req, params.params), controller.signal, buffer);
    } finally {
      starting--;
    }
    // An answer the pipeline refused (401 from authentication, 400 validation): a plain HTTP error, as for a query.
    if (started.kind === 'single' && started.response.status !== 200) {
      const { response } = started;
      res.writeHead(response.status, { ...refusalType(headerText(req.headers.accept)), ...response.headers });
      res.end(JSON.stringify(response.body));
      return;
    }
    const events = httpEventSource(started, () => open.delete(events));
    source = events;
    open.add(events);
    if (buffer.exceeded) events.fail([{ message: clientTooSlowMessage(limit), extensions: { code: 'SUBSCRIPTION_CLIENT_TOO_SLOW' } }]);
    if (closing || controller.signal.aborted) {
      await events.return();
      if (!res.writableEnded) refuse(res, 503, 'The router is shutting down.', 'GRAPH_NOT_READY');
      return;
    }
    if (protocol === 'sse') await writeSse(req, res, events);
    else await writeMultipart(res, events, options.multipartHeartbeatMs);
  };

  return {
    wants: (req) => streamingProtocolOf(headerText(req.headers.accept)) !== undefined,
    async handle(req, res) {
      try {
        await handle(req, res);
      } catch (error) {
        options.log.debug({ err: error }, 'streamed GraphQL answer ended early');
        if (!res.headersSent) refuse(res, 400, 'The request could not be read.', 'BAD_REQUEST');
        else res.destroy();
      }
    },
    get active() {
      return open.size;
    },
    async close() {
      closing = true;
      await Promise.allSettled([...open].map((source) => source.return()));
    },
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * What the response's socket holds that the kernel did not take: its
 * `writableLength`. Node corks a response's socket for the rest of the tick
 * of each write, so right after a write (the transports take the next event
 * then) everything just written counts until the tick ends, even for a
 * client that reads all; a corked socket says nothing about the client yet
 * and counts 0 (the next check, at the next event or 50 ms later while the
 * queue holds the subgraph subscription back, sees it flushed).
 */
function unsentBytes(res: ServerResponse): number {
  return res.socket && res.socket.writableCorked > 0 ? 0 : res.writableLength;
}
