import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import { createYoga, type Plugin as YogaPlugin, type YogaServerInstance } from 'graphql-yoga';
import { queryPlansEnabled, type CoreConfig } from '../config/core-schema.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { memoOn } from '../object-memo.js';
import type { OperationRequest, OperationResponse } from '../pipeline/stages.js';
import { useRequestBodyLimit } from './body-limit.js';
import { CorsPolicy, type CorsHeaders } from './cors.js';
import { CsrfGuard } from './csrf.js';
import { readParams, useStrictParams } from './graphql-params.js';
import { answerPost, postLaneCandidate, type PostLaneOptions } from './graphql-post-lane.js';
import type { WebSocketEndpoint } from '../subscriptions/websocket-server.js';
import type { StreamingHttpEndpoint } from '../subscriptions/streaming-http.js';
import { parseListenAddress } from './listen-address.js';
import { bindListener, guardHttpServer, MAIN_LISTENER_TIMEOUTS, type ListenerTimeouts } from './listener-guard.js';
import { Playground } from './playground.js';
import { operationRequestOf } from './operation-request.js';
import { resultStatus, resultTypeFor } from './result-head.js';

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
  /** Whether a graph is loaded (readiness). */
  readonly ready: () => boolean;
  readonly metrics: Metrics;
  /** Attaches GraphQL over WebSocket to the bound listener (subscriptions/websocket-server.ts). Default: none. */
  readonly webSocket?: (server: Server) => WebSocketEndpoint;
  /** Streamed answers (SSE, multipart) for requests whose `Accept` asks for them (subscriptions/streaming-http.ts). Default: none. */
  readonly streaming?: StreamingHttpEndpoint;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/**
 * The main listener: `/graphql` through graphql-yoga (GraphQL over HTTP:
 * GET and POST, content negotiation, batching, body limit) or, for plain
 * JSON POSTs, the post lane; the playground at `/`, and the health
 * endpoints. CORS (cors.ts) and CSRF prevention (csrf.ts) are applied to
 * `/graphql` here, before either lane runs.
 */
export class HttpServer {
  private readonly yoga: YogaServerInstance<Record<string, never>, Record<string, never>>;
  private server: Server | undefined;
  /** Set once close() starts: keep-alive ends and readiness reports 503. */
  private draining = false;
  private readonly playground: Playground;
  /** The lane for plain JSON POSTs (graphql-post-lane.ts). */
  private readonly postLane: PostLaneOptions;
  /** `cors.*`; undefined when CORS is off. */
  private readonly cors: CorsPolicy | undefined;
  /** `csrf_prevention.*`. */
  private readonly csrf: CsrfGuard;
  /** The last `Host` header found usable in a URL (they rarely change). */
  private knownHost: string | undefined;
  /** GraphQL over WebSocket on the listener, when attached. */
  private webSocket: WebSocketEndpoint | undefined;

  constructor(private readonly options: HttpServerOptions) {
    const { config } = options;
    // The plan-and-trace panel asks for query plans: only where they may be shown.
    this.playground = new Playground({ endpoint: '/graphql', tracePanel: queryPlansEnabled(config) });
    this.cors = config.cors.enabled ? new CorsPolicy(config.cors, options.log) : undefined;
    this.csrf = new CsrfGuard(config.csrf_prevention);
    this.postLane = {
      maxBodyBytes: config.limits.max_request_body,
      execute: options.execute,
      serialize: serializeBody,
      fallback: (req, res, body) => this.answerWithYoga(req, res, body),
    };
    this.yoga = createYoga({
      graphqlEndpoint: '/graphql',
      graphiql: false,
      landingPage: false,
      logging: false,
      maskedErrors: false,
      healthCheckEndpoint: '/__yoga-health',
      // Persisted document ids sent instead of `query` (GraphQL over HTTP's `documentId`, Relay's `doc_id`).
      extraParamNames: ['documentId', 'doc_id'],
      batching: config.limits.max_batch_size > 0 ? { limit: config.limits.max_batch_size } : false,
      maxRequestBodySize: false,
      // CORS is ours (cors.ts): yoga's echoes any origin a listed one is a substring of.
      cors: false,
      // The strict parameter reader first, so the body limit wraps it.
      plugins: [useStrictParams(), useRequestBodyLimit(config.limits.max_request_body), routerBridge(options)],
    });
  }

  /** Answers a fetch-style request in-process. */
  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const own = await this.ownRoute(request.method, url.pathname, request.headers.get('accept-encoding') ?? undefined);
    if (own) return new Response(own.body, { status: own.status, headers: own.headers });
    const header = (name: string): string | undefined => request.headers.get(name) ?? undefined;
    const cors = this.cors?.answer(request.method, header('origin'), header('access-control-request-method'));
    if (cors?.preflight) return new Response(null, { status: cors.preflight.status, headers: cors.preflight.headers });
    const refusal = this.csrf.check(request.method, header);
    const response = refusal ? new Response(refusal.body, { status: refusal.status, headers: JSON_HEADERS }) : await this.yoga.fetch(request);
    if (!cors || Object.keys(cors.headers).length === 0) return response;
    const headers = new Headers(response.headers);
    for (const [name, value] of Object.entries(cors.headers)) {
      if (name === 'vary') appendVary(headers, value);
      else headers.set(name, value);
    }
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
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
    this.draining = true;
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
    await this.yoga.dispose?.();
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.draining) res.setHeader('connection', 'close');
    try {
      const path = (req.url ?? '/').split('?')[0]!;
      const own = await this.ownRoute(req.method ?? 'GET', path, req.headers['accept-encoding']);
      if (own) {
        res.writeHead(own.status, own.headers);
        res.end(own.body);
        return;
      }
      if (!this.hostIsUsable(req.headers.host)) {
        res.writeHead(400, JSON_HEADERS);
        res.end(JSON.stringify({ errors: [{ message: 'The Host header is not a valid host.', extensions: { code: 'BAD_REQUEST' } }] }));
        return;
      }
      const method = req.method ?? 'GET';
      if (this.cors) {
        const cors = this.cors.answer(method, req.headers.origin, headerValue(req.headers['access-control-request-method']));
        if (cors.preflight) {
          res.writeHead(cors.preflight.status, cors.preflight.headers);
          res.end();
          return;
        }
        // Merged into whatever the lane or yoga writes next.
        setCorsHeaders(res, cors.headers);
      }
      const refusal = this.csrf.check(method, (name) => headerValue(req.headers[name]));
      if (refusal) {
        res.writeHead(refusal.status, JSON_HEADERS);
        res.end(refusal.body);
        return;
      }
      if (this.options.streaming?.wants(req)) await this.options.streaming.handle(req, res);
      else if (postLaneCandidate(req, this.postLane.maxBodyBytes)) await answerPost(req, res, this.postLane);
      else await this.yoga.requestListener(req, res);
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

  /** Whether a `Host` header can be part of a URL (yoga builds the request's URL from it). */
  private hostIsUsable(host: string | undefined): boolean {
    if (host === undefined || host === this.knownHost) return true;
    if (!URL.canParse(`http://${host}/`)) return false;
    this.knownHost = host;
    return true;
  }

  /** Yoga answers a request whose body was already read. */
  private async answerWithYoga(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Promise<void> {
    if (body === undefined) return this.yoga.requestListener(req, res);
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method, headers, body: new Uint8Array(body) });
    const response = await this.yoga.fetch(request);
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, out);
    res.end(bytes);
  }

  /** Routes the router answers itself; undefined hands the request to yoga. */
  private async ownRoute(
    method: string,
    path: string,
    acceptEncoding: string | undefined,
  ): Promise<{ status: number; headers: Readonly<Record<string, string>>; body: string | Buffer<ArrayBuffer> } | undefined> {
    if (path === '/graphql') return undefined;
    if (path === '/health/live') return { status: 200, headers: JSON_HEADERS, body: '{"status":"ok"}' };
    if (path === '/health/ready') {
      return this.options.ready() && !this.draining
        ? { status: 200, headers: JSON_HEADERS, body: '{"status":"ready"}' }
        : { status: 503, headers: JSON_HEADERS, body: '{"status":"not ready"}' };
    }
    if ((method === 'GET' || method === 'HEAD') && this.options.config.playground.enabled) {
      const playground = await this.playground.answer(path, acceptEncoding);
      if (playground) return playground;
    }
    return { status: 404, headers: JSON_HEADERS, body: JSON.stringify({ errors: [{ message: `Not found: ${path}` }] }) };
  }
}

/** A header node:http may report as a list (repeated), as one value. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function setCorsHeaders(res: ServerResponse, headers: CorsHeaders): void {
  for (const name in headers) res.setHeader(name, headers[name]!);
}

/** Adds a `Vary` entry unless the header lists it (or `*`) already. */
function appendVary(headers: Headers, value: string): void {
  const current = headers.get('vary');
  if (!current) headers.set('vary', value);
  else if (!current.split(',').some((entry) => ['*', value.toLowerCase()].includes(entry.trim().toLowerCase()))) headers.set('vary', `${current}, ${value}`);
}

/** Whether a failure is the client going away (connection reset, body cut short). */
function clientGone(req: IncomingMessage, error: unknown): boolean {
  if (req.destroyed && !req.complete) return true;
  const code = error instanceof Error && 'code' in error ? (error as { code?: unknown }).code : undefined;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error instanceof Error && error.message === 'aborted');
}

/**
 * Hands every parsed GraphQL request to the router's pipeline and maps its
 * answer back to yoga. Parameters are read by `readParams`, as on the post
 * lane; yoga's own parameter check, which runs after this, then finds nothing to refuse.
 */
function routerBridge(options: HttpServerOptions): YogaPlugin {
  return {
    onParams({ params, setParams, setParamsHandler }) {
      // A batch entry that is no object (`null`, `1`): yoga's own check answers it with 400.
      if (params === null || typeof params !== 'object' || Array.isArray(params)) return;
      const checked = readParams(params as Record<string, unknown>);
      if (checked instanceof GraphQLError) throw checked;
      // Persisted operations arrive without text (the pipeline's plugins resolve it); yoga insists on a query string.
      if (checked.query === undefined) setParams({ ...params, query: '' });
      setParamsHandler(async ({ request }) => {
        const headers: Record<string, string> = {};
        request.headers.forEach((value, name) => {
          headers[name] = value;
        });
        const operation = operationRequestOf(checked, { headers, method: request.method === 'GET' ? 'GET' : 'POST', origin: 'http' });
        const response = await options.execute(operation, request.signal);
        return toYogaResult(response, resultStatus(response, resultTypeFor(headers.accept)));
      });
    },
  };
}

/** Where a data-only body's data object keeps its JSON: requests that share shaped data share its bytes too. */
const JSON_BYTES = Symbol('switchyard.jsonBytes');

function serializeBody(body: OperationResponse['body']): string | Buffer {
  const data = body.data;
  if (data === null || typeof data !== 'object' || body.errors !== undefined || body.extensions !== undefined || Object.keys(body).length !== 1) {
    return JSON.stringify(body);
  }
  return memoOn(data, JSON_BYTES, () => Buffer.from(JSON.stringify(body)));
}

/**
 * What yoga gets back: the status (result-head.ts) and headers in
 * `extensions.http`, and our serializer for the body. The body's own fields
 * are not handed over, so yoga neither rewrites its errors nor reads a status
 * from them (`extensions.http` a subgraph put on an error).
 */
function toYogaResult(response: OperationResponse, status: number): Record<string, unknown> {
  return {
    extensions: { http: { status, headers: response.headers } },
    stringify: () => serializeBody(response.body).toString(),
  };
}
