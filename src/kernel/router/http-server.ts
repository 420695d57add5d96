import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { CoreConfig } from '../config/core-schema.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { GraphQLRequestStep, HttpAnswer, HttpRequest } from '../pipeline/http-routes.js';
import type { OperationRequest, OperationResponse } from '../pipeline/stages.js';
import type { WebSocketEndpoint } from '../subscriptions/websocket-server.js';
import type { StreamingHttpEndpoint } from '../subscriptions/streaming-http.js';
import { CsrfGuard } from './csrf.js';
import { answerGraphQL, serializeResult, type GraphQLHttpAnswer, type GraphQLHttpOptions, type GraphQLHttpRequest } from './graphql-http.js';
import { answerPost, postLaneCandidate, type PostLaneOptions } from './graphql-post-lane.js';
import { GRAPHQL_PATH, jsonError, runRoute, type HttpRoutes, type OwnedStep } from './http-routes.js';
import { parseListenAddress } from './listen-address.js';
import { bindListener, guardHttpServer, MAIN_LISTENER_TIMEOUTS, type ListenerTimeouts } from './listener-guard.js';
import { headersFromRaw } from './operation-request.js';
import { closeIfBodyPending, readFetchBody, readNodeBody, requestTooLarge } from './request-body.js';
import { responseCompressionOf, sendAnswer, type ResponseCompression } from './response-compression.js';
import { mergeVary } from './vary.js';

/** Where the router listens. */
export interface ListenInfo {
  readonly host: string;
  readonly port: number;
  /** `http://host:port` */
  readonly url: string;
}

/** What the HTTP server needs from the router. */
export interface HttpServerOptions {
  readonly config: CoreConfig;
  readonly log: Logger;
  readonly execute: (request: OperationRequest, signal: AbortSignal) => Promise<OperationResponse>;
  /** The plugins' routes and `/graphql` steps (health, playground, CORS and third-party ones). */
  readonly routes: HttpRoutes;
  readonly metrics: Metrics;
  /** Attaches GraphQL over WebSocket to the bound listener (subscriptions/websocket-server.ts). Default: none. */
  readonly webSocket?: (server: Server) => WebSocketEndpoint;
  /** Streamed answers (SSE, multipart) for requests whose `Accept` asks for them (subscriptions/streaming-http.ts). Default: none. */
  readonly streaming?: StreamingHttpEndpoint;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/**
 * The main listener. `/graphql` is the router's own: the plugins'
 * `beforeGraphQL` steps (CORS), CSRF prevention (csrf.ts), then streamed
 * answers (the streaming endpoint), the JSON POST lane
 * (graphql-post-lane.ts) or the general handler (graphql-http.ts). Every
 * other path is a plugin route (health, the playground, third-party ones)
 * or 404. `handle` answers a fetch `Request` in-process the same way.
 */
export class HttpServer {
  private server: Server | undefined;
  /** Set once close() starts: keep-alive ends and readiness reports 503. */
  private closing = false;
  /** The general handler's settings. */
  private readonly graphql: GraphQLHttpOptions;
  /** The lane for plain JSON POSTs (graphql-post-lane.ts). */
  private readonly postLane: PostLaneOptions;
  /** gzip for `/graphql` answers (`traffic_shaping.router`); undefined: off. */
  private readonly compression: ResponseCompression | undefined;
  /** `csrf_prevention.*`. */
  private readonly csrf: CsrfGuard;
  /** `beforeGraphQL` steps; empty (and skipped) when no plugin has one. */
  private readonly steps: readonly OwnedStep[];
  /** The last `Host` header found usable in a URL (they rarely change). */
  private knownHost: string | undefined;
  /** GraphQL over WebSocket on the listener, when attached. */
  private webSocket: WebSocketEndpoint | undefined;

  constructor(private readonly options: HttpServerOptions) {
    const { config } = options;
    this.csrf = new CsrfGuard(config.csrf_prevention);
    this.steps = options.routes.graphqlSteps;
    const { router } = config.traffic_shaping;
    this.compression = responseCompressionOf(router);
    this.graphql = {
      maxBodyBytes: config.limits.max_request_body,
      maxBatchSize: config.limits.max_batch_size,
      decompress: router.decompression_enabled,
      execute: options.execute,
    };
    this.postLane = {
      maxBodyBytes: config.limits.max_request_body,
      compression: this.compression,
      execute: options.execute,
      serialize: serializeResult,
      fallback: (req, res, body) => this.answerGraphQL(req, res, body),
    };
  }

  /** Whether close() has started (readiness answers 503 from then on). */
  get draining(): boolean {
    return this.closing;
  }

  /** Answers a fetch-style request in-process. */
  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const routeRequest = fetchHttpRequest(request, url, this.graphql.maxBodyBytes);
    if (url.pathname !== GRAPHQL_PATH) return toResponse(await this.answerRoute(routeRequest), request.method);
    const step = this.steps.length > 0 ? this.runSteps(routeRequest) : undefined;
    if (step?.answer) return toResponse(step.answer, request.method);
    const refusal = this.csrf.check(request.method, routeRequest.header);
    const answer = refusal
      ? { status: refusal.status, headers: JSON_HEADERS, body: refusal.body }
      : await answerGraphQL(fetchGraphQLRequest(request, url, routeRequest.header), this.graphql);
    return toResponse(answer, request.method, step?.headers);
  }

  /**
   * Binds the main listener. Hostile connections are bounded by
   * `MAIN_LISTENER_TIMEOUTS` (listener-guard.ts); `timeouts` shortens them (tests).
   */
  async listen(address: string, timeouts?: Partial<ListenerTimeouts>): Promise<ListenInfo> {
    const { host, port } = parseListenAddress(address);
    const server = createServer((req, res) => void this.onRequest(req, res));
    guardHttpServer(server, { name: 'router', log: this.options.log, base: MAIN_LISTENER_TIMEOUTS, timeouts });
    const bound = await bindListener(server, host, port, { name: 'router', log: this.options.log });
    this.server = server;
    this.webSocket = this.options.webSocket?.(server);
    const info = { host, port: bound.port, url: `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}` };
    this.options.log.info({ listen_addr: `${host}:${bound.port}`, playground: this.options.config.playground.enabled }, 'Router listening');
    return info;
  }

  /**
   * Stops serving: first a short drain (readiness answers 503, answers carry
   * `Connection: close`, requests already on the wire are still read), then
   * the listener closes and in-flight requests finish (at most `graceMs`).
   */
  async close(graceMs = 30_000, drainMs = 250): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.closing = true;
    // Subscriptions complete first (clients get `complete`, then close code 1001).
    await this.webSocket?.close();
    this.webSocket = undefined;
    await this.options.streaming?.close();
    await new Promise((resolve) => setTimeout(resolve, drainMs));
    await new Promise<void>((resolve) => {
      // Connections that finish their in-flight request go idle; close those as they
      // appear instead of waiting for the keep-alive timeout.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const timer = setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, graceMs);
      timer.unref();
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.closing) res.setHeader('connection', 'close');
    try {
      const target = req.url ?? '/';
      const query = target.indexOf('?');
      const path = query === -1 ? target : target.slice(0, query);
      if (path !== GRAPHQL_PATH) {
        writeAnswer(res, await this.answerRoute(new NodeHttpRequest(req, res, path, this.graphql.maxBodyBytes)));
        return;
      }
      // Before the steps, so without CORS headers: a browser cannot send a Host that is no host.
      if (!this.hostIsUsable(req.headers.host)) {
        closeIfBodyPending(req, res);
        res.writeHead(400, JSON_HEADERS);
        res.end(JSON.stringify({ errors: [{ message: 'The Host header is not a valid host.', extensions: { code: 'BAD_REQUEST' } }] }));
        return;
      }
      const method = req.method ?? 'GET';
      if (this.steps.length > 0) {
        const step = this.runSteps(new NodeHttpRequest(req, res, path, this.graphql.maxBodyBytes));
        if (step.answer) {
          closeIfBodyPending(req, res);
          writeAnswer(res, step.answer);
          return;
        }
        // Merged into whatever the lane, the handler or the stream writes next (their own headers win, `Vary` adds up).
        for (const name in step.headers) res.setHeader(name, step.headers[name]!);
        if (step.headers.vary !== undefined) keepStepVary(res, step.headers.vary);
      }
      const refusal = this.csrf.check(method, (name) => headerValue(req.headers[name]));
      if (refusal) {
        closeIfBodyPending(req, res);
        res.writeHead(refusal.status, JSON_HEADERS);
        res.end(refusal.body);
        return;
      }
      if (this.options.streaming?.wants(req)) await this.options.streaming.handle(req, res);
      else if (postLaneCandidate(req, this.postLane.maxBodyBytes)) await answerPost(req, res, this.postLane);
      else await this.answerGraphQL(req, res, undefined);
    } catch (error) {
      // A client that leaves mid-request is no fault of the router's.
      if (clientGone(req, error)) {
        this.options.log.debug({ err: error }, 'client closed the connection before the answer');
        if (!res.destroyed) res.destroy();
        return;
      }
      this.options.log.error({ err: error }, 'HTTP handler failed');
      if (!res.headersSent) res.writeHead(500, JSON_HEADERS);
      res.end(JSON.stringify({ errors: [{ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }));
    }
  }

  /** The general handler over node's request; `body` when the post lane read it already. */
  private async answerGraphQL(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Promise<void> {
    const request = new NodeGraphQLRequest(req, res, body);
    const answer = await answerGraphQL(request, this.graphql);
    if (res.destroyed) return;
    // A body cut at the limit, or refused unread (a declared length over it), is still arriving:
    // the connection cannot carry another request without node reading all of it first.
    if (request.cut) res.setHeader('connection', 'close');
    else closeIfBodyPending(req, res);
    await sendAnswer(res, answer.status, answer.headers, answer.body, this.compression);
  }

  /** A plugin route's answer, or 404. */
  private async answerRoute(request: HttpRequest): Promise<HttpAnswer> {
    const owned = this.options.routes.find(request.path, request.method);
    return (owned && (await runRoute(owned, request))) ?? { status: 404, headers: JSON_HEADERS, body: JSON.stringify({ errors: [{ message: `Not found: ${request.path}` }] }) };
  }

  /**
   * Runs the `beforeGraphQL` steps in plugin order: the first answer (or a
   * step's failure) ends the request, carrying the earlier steps' headers;
   * headers add up.
   */
  private runSteps(request: HttpRequest): { answer?: HttpAnswer; headers: Record<string, string> } {
    const headers: Record<string, string> = {};
    for (const { plugin, log, step } of this.steps) {
      let outcome: GraphQLRequestStep | undefined;
      try {
        outcome = step(request);
      } catch (error) {
        log.error({ err: error }, `[${plugin}] beforeGraphQL failed`);
        const failed = jsonError(500, `Plugin "${plugin}" failed on a request to ${GRAPHQL_PATH}.`, 'PLUGIN_ERROR');
        return { answer: { ...failed, headers: withStepHeaders(failed.headers, headers) }, headers };
      }
      if (!outcome) continue;
      if (outcome.answer) return { answer: { ...outcome.answer, headers: withStepHeaders(outcome.answer.headers, headers) }, headers };
      for (const name in outcome.headers) {
        const key = name.toLowerCase();
        headers[key] = key === 'vary' ? mergeVary(headers.vary, outcome.headers[name]!) : outcome.headers[name]!;
      }
    }
    return { headers };
  }

  /** Whether a `Host` header can be part of a URL (clients and plugins build the request's URL from it). */
  private hostIsUsable(host: string | undefined): boolean {
    if (host === undefined || host === this.knownHost) return true;
    if (!URL.canParse(`http://${host}/`)) return false;
    this.knownHost = host;
    return true;
  }
}

/** A header node:http may report as a list (repeated), as one value. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Aborted when the response closes before it was written in full (the client went away). */
function abortOnClose(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** A route's (or step's) view of node's request. */
class NodeHttpRequest implements HttpRequest {
  private abort: AbortSignal | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly path: string,
    private readonly limit: number,
  ) {}

  get method(): string {
    return this.req.method ?? 'GET';
  }

  get query(): URLSearchParams {
    const target = this.req.url ?? '';
    const at = target.indexOf('?');
    return new URLSearchParams(at === -1 ? '' : target.slice(at + 1));
  }

  readonly header = (name: string): string | undefined => headerValue(this.req.headers[name]);

  async body(): Promise<Uint8Array> {
    const bytes = await readNodeBody(this.req, this.limit);
    if (bytes === undefined) {
      this.res.setHeader('connection', 'close');
      throw requestTooLarge(this.limit);
    }
    return bytes;
  }

  get signal(): AbortSignal {
    this.abort ??= abortOnClose(this.res);
    return this.abort;
  }
}

/** The general handler's view of node's request. */
class NodeGraphQLRequest implements GraphQLHttpRequest {
  /** Set when the body passed the limit and was left unread. */
  cut = false;
  private abort: AbortSignal | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly body: Buffer | undefined,
  ) {}

  get method(): string {
    return this.req.method ?? 'GET';
  }

  get search(): string {
    const target = this.req.url ?? '';
    const at = target.indexOf('?');
    return at === -1 ? '' : target.slice(at + 1);
  }

  header(name: string): string | undefined {
    return headerValue(this.req.headers[name]);
  }

  headers(): Record<string, string> {
    return headersFromRaw(this.req.rawHeaders);
  }

  async readBody(limit: number): Promise<Buffer | undefined> {
    if (this.body !== undefined) return this.body;
    const bytes = await readNodeBody(this.req, limit);
    this.cut = bytes === undefined;
    return bytes;
  }

  get signal(): AbortSignal {
    this.abort ??= abortOnClose(this.res);
    return this.abort;
  }
}

/** A fetch `Request` as a route or step sees it. */
function fetchHttpRequest(request: Request, url: URL, limit: number): HttpRequest {
  return {
    method: request.method,
    path: url.pathname,
    query: url.searchParams,
    header: (name) => request.headers.get(name) ?? undefined,
    body: async () => {
      const bytes = await readFetchBody(request.body, limit);
      if (bytes === undefined) throw requestTooLarge(limit);
      return bytes;
    },
    signal: request.signal,
  };
}

/** A fetch `Request` as the general handler sees it. */
function fetchGraphQLRequest(request: Request, url: URL, header: (name: string) => string | undefined): GraphQLHttpRequest {
  return {
    method: request.method,
    search: url.search.slice(1),
    header,
    headers: () => {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return headers;
    },
    readBody: (limit) => readFetchBody(request.body, limit),
    signal: request.signal,
  };
}

/** A route's or step's answer on node's response (HEAD: node leaves the body out). */
function writeAnswer(res: ServerResponse, answer: HttpAnswer): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

/** An answer as a fetch `Response`; `extra` (a step's headers) added as `withStepHeaders` does. */
function toResponse(answer: HttpAnswer | GraphQLHttpAnswer, method: string, extra?: Readonly<Record<string, string>>): Response {
  const headers = extra === undefined ? answer.headers : withStepHeaders(answer.headers, extra);
  const body = method === 'HEAD' || answer.body === undefined ? null : (answer.body as Uint8Array<ArrayBuffer> | string);
  return new Response(body, { status: answer.status, headers });
}

/**
 * An answer's headers with the steps' (lower-case names) added: the
 * answer's own win, except `Vary`, whose entries add up. The socket path
 * gets the same through `setHeader` and `keepStepVary`.
 */
function withStepHeaders(own: Readonly<Record<string, string>> | undefined, steps: Readonly<Record<string, string>>): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const name in own) merged[name.toLowerCase()] = own[name]!;
  for (const name in steps) {
    if (name === 'vary') merged.vary = mergeVary(merged.vary, steps.vary!);
    else if (!Object.hasOwn(merged, name)) merged[name] = steps[name]!;
  }
  return merged;
}

/**
 * Keeps a step's `Vary` when a writer (the post lane, the handler, a
 * stream) passes its own to `writeHead`, which would replace the step's by
 * name: the two are merged instead, as `withStepHeaders` does in-process.
 */
function keepStepVary(res: ServerResponse, stepVary: string): void {
  const writeHead = res.writeHead;
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const at = rest.findIndex((arg) => arg !== null && typeof arg === 'object' && !Array.isArray(arg));
    if (at !== -1) {
      const headers = rest[at] as OutgoingHttpHeaders;
      const own = Object.keys(headers).find((name) => name.toLowerCase() === 'vary');
      if (own !== undefined) {
        const { [own]: value, ...others } = headers;
        rest[at] = { ...others, vary: mergeVary(String(value), stepVary) };
      }
    }
    return (writeHead as (...args: unknown[]) => ServerResponse).call(res, status, ...rest);
  }) as ServerResponse['writeHead'];
}

/** Whether a failure is the client going away (connection reset, body cut short). */
function clientGone(req: IncomingMessage, error: unknown): boolean {
  if (req.destroyed && !req.complete) return true;
  const code = error instanceof Error && 'code' in error ? (error as { code?: unknown }).code : undefined;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error instanceof Error && error.message === 'aborted');
}
