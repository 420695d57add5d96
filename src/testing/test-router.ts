import { composeSubgraphs } from '../compose/compose.js';
import type { CoreConfigInput } from '../kernel/config/core-schema.js';
import type { GraphQLResponseBody } from '../kernel/pipeline/stages.js';
import type { SwitchyardPlugin } from '../kernel/pipeline/plugin.js';
import { createLogger, type Logger } from '../kernel/logger.js';
import { createRouter, type Router } from '../kernel/router/router.js';
import type { ListenInfo } from '../kernel/router/http-server.js';

/** A subgraph the test router routes to (a `TestSubgraph`, or any name + URL + SDL). */
export interface TestRouterSubgraph {
  readonly name: string;
  readonly url: string;
  readonly typeDefs: string;
}

/** Options of `startTestRouter`. */
export interface TestRouterOptions {
  /** Subgraphs to compose into the supergraph. */
  readonly subgraphs: readonly TestRouterSubgraph[];
  /** Plugins, in order. Default: none. */
  readonly plugins?: readonly SwitchyardPlugin[];
  /** Core config (file shape). Default: defaults, with file watching off. */
  readonly config?: Omit<CoreConfigInput, 'version'>;
  /** Also serve HTTP on 127.0.0.1 (a free port). Default: false (requests go in-process). */
  readonly listen?: boolean;
  /** Default: a silent logger (set `LOG_LEVEL` to see logs). */
  readonly logger?: Logger;
}

/** One GraphQL request for `TestRouter.query`. */
export interface TestRequest {
  readonly query?: string;
  readonly variables?: Record<string, unknown>;
  readonly operationName?: string;
  readonly extensions?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  /** Default: POST. GET puts the fields in the URL. */
  readonly method?: 'GET' | 'POST';
}

/** An HTTP answer, with the JSON body parsed. */
export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: GraphQLResponseBody;
}

export interface TestRouter extends AsyncDisposable {
  readonly router: Router;
  /** Set when started with `listen: true`. */
  readonly url: string | undefined;
  /** Sends a GraphQL request through the router's HTTP handling. */
  query(request: TestRequest | string): Promise<TestResponse>;
  /** Sends any HTTP request to the router (`path` like `/health/ready`). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Starts a router over the given subgraphs (composed on the fly) with the
 * given plugins: the few lines a plugin test needs.
 */
export async function startTestRouter(options: TestRouterOptions): Promise<TestRouter> {
  const composed = composeSubgraphs(options.subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
  const router = await createRouter({
    config: { ...options.config, execution_config: { file: { watch: false } } },
    plugins: options.plugins,
    graph: { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' },
    logger: options.logger ?? createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
  });
  let listening: ListenInfo | undefined;
  if (options.listen) listening = await router.listen('127.0.0.1:0');
  const base = listening?.url ?? 'http://router.test';
  const send = (path: string, init?: RequestInit): Promise<Response> => (listening ? fetch(`${base}${path}`, init) : router.handle(new Request(`${base}${path}`, init)));
  const close = () => router.close();
  return {
    router,
    url: listening?.url,
    fetch: send,
    async query(input) {
      const request: TestRequest = typeof input === 'string' ? { query: input } : input;
      const headers: Record<string, string> = { accept: 'application/graphql-response+json', ...request.headers };
      let response: Response;
      if (request.method === 'GET') {
        const params = new URLSearchParams();
        if (request.query !== undefined) params.set('query', request.query);
        if (request.operationName) params.set('operationName', request.operationName);
        if (request.variables) params.set('variables', JSON.stringify(request.variables));
        if (request.extensions) params.set('extensions', JSON.stringify(request.extensions));
        response = await send(`/graphql?${params}`, { method: 'GET', headers });
      } else {
        const { method: _method, headers: _headers, ...body } = request;
        response = await send('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      }
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: JSON.parse(text) as GraphQLResponseBody };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
