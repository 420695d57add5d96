/**
 * Every listener of the router, started in this process on 127.0.0.1:0 the
 * way the router starts it, each with a normal request to prove it still
 * serves, and (where it has one) a request whose answer is large enough to
 * fill the socket buffers of a client that does not read.
 */
import { startConnectListener } from '../../../plugins/connect/connect-listener.js';
import { startPprofServer } from '../../../plugins/profiling/pprof-server.js';
import { startInvalidationEndpoint } from '../../../plugins/response-cache/invalidation-endpoint.js';
import { noopMetrics } from '../../../src/kernel/metrics/metrics.js';
import { startMetricsServer } from '../../../src/kernel/metrics/metrics-server.js';
import { HttpServer } from '../../../src/kernel/router/http-server.js';
import { HttpRoutes } from '../../../src/kernel/router/http-routes.js';
import { healthPlugin } from '../../../src/kernel/builtins/health.js';
import { createLogger, defaultConfig, type ListenerTimeouts, type Logger } from '../../../src/index.js';

/** Large answers: well beyond what loopback socket buffers hold, so a client that does not read leaves most of it in the server. */
export const BIG_BYTES = 48 * 1024 * 1024;

/** A listener under test. */
export interface Target {
  readonly name: string;
  readonly port: number;
  /** A complete, valid HTTP/1.1 request (with `Connection: close`). */
  readonly request: string;
  /** The head of a request with a body, and a start of that body. */
  readonly post: { readonly head: string; readonly bodyStart: string };
  /** A request whose answer is BIG_BYTES, when the listener has one. */
  readonly bigRequest?: string;
  /** The status `request` is answered with. */
  readonly okStatus: number;
  close(): Promise<void>;
}

function get(path: string, headers = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`;
}

function postHead(path: string, headers = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}Content-Length: 100000\r\n\r\n`;
}

function portOf(address: string): number {
  return Number(/:(\d+)(?:\/.*)?$/.exec(address)![1]);
}

/** A logger that keeps its lines (debug and up), for the `Listener bounds` and bad-request lines. */
export { captureLogs } from '../../support/capture-logs.js';

/** The main listener (the router's GraphQL handler and the health routes) over a pipeline stub: `{ big }` answers BIG_BYTES of JSON. */
async function mainListener(log: Logger, timeouts?: Partial<ListenerTimeouts>): Promise<Target> {
  const big = { data: { big: 'x'.repeat(BIG_BYTES) } };
  const server = new HttpServer({
    config: defaultConfig(),
    log,
    metrics: noopMetrics,
    routes: new HttpRoutes([{ name: 'switchyard/health', log, instance: (await healthPlugin(() => true).setup({} as never)) ?? {} }]),
    execute: async (request) => ({ status: 200, headers: {}, body: request.query?.includes('big') ? big : { data: { ok: true } } }),
  });
  const info = await server.listen('127.0.0.1:0', timeouts);
  const query = (q: string) => `/graphql?query=${encodeURIComponent(q)}`;
  return {
    name: 'router',
    port: info.port,
    request: get('/health/live'),
    post: { head: postHead('/graphql'), bodyStart: '{"query":"{ ok' },
    bigRequest: get(query('{ big }'), 'Accept: application/json\r\n'),
    okStatus: 200,
    close: () => server.close(0, 0),
  };
}

/** How long `/slow` on the Connect listener takes to answer. */
export const SLOW_ANSWER_MS = 2_000;

/**
 * The Connect listener (HTTP/1.1 and h2c on one port) with a handler that
 * reads the body and answers; `/big` answers BIG_BYTES; `/slow` answers
 * after SLOW_ANSWER_MS without reading the request (as a GET call does).
 */
async function connectListener(log: Logger, timeouts?: Partial<ListenerTimeouts>): Promise<Target> {
  const big = Buffer.alloc(BIG_BYTES, 'x');
  const listener = await startConnectListener(
    '127.0.0.1:0',
    (req, res) => {
      if (req.url === '/slow') {
        setTimeout(() => res.end('{}'), SLOW_ANSWER_MS);
        return;
      }
      req.resume();
      req.once('end', () => {
        if (req.url === '/big') res.end(big);
        else res.end('{}');
      });
    },
    { log, timeouts },
  );
  return {
    name: 'connect',
    port: portOf(listener.address),
    request: get('/ok'),
    post: { head: postHead('/projects.v1.ProjectsService/GetProject', 'Connect-Protocol-Version: 1\r\n'), bodyStart: '{"id":' },
    bigRequest: get('/big'),
    okStatus: 200,
    close: () => listener.close(100),
  };
}

async function invalidationListener(log: Logger, timeouts?: Partial<ListenerTimeouts>): Promise<Target> {
  const endpoint = await startInvalidationEndpoint({
    listenAddr: '127.0.0.1:0',
    path: '/invalidation',
    sharedKey: 'a-shared-key-of-at-least-32-characters!',
    switches: { cache_tag: true, subgraph: true, type: true },
    subgraphs: () => new Set(['products']),
    invalidate: async () => 0,
    log,
    timeouts,
  });
  return {
    name: 'invalidation',
    port: portOf(endpoint.url),
    // Refused before any body is read: the path is checked first.
    request: get('/elsewhere'),
    post: { head: postHead('/invalidation', 'Authorization: a-shared-key-of-at-least-32-characters!\r\n'), bodyStart: '[{"kind":' },
    okStatus: 404,
    close: () => endpoint.close(),
  };
}

async function metricsListener(log: Logger, timeouts?: Partial<ListenerTimeouts>): Promise<Target> {
  const server = await startMetricsServer(noopMetrics, '127.0.0.1:0', '/metrics', log, timeouts);
  return {
    name: 'metrics',
    port: portOf(server.url),
    request: get('/metrics'),
    post: { head: postHead('/metrics'), bodyStart: '{' },
    okStatus: 200,
    close: () => server.close(),
  };
}

async function pprofListener(log: Logger, timeouts?: Partial<ListenerTimeouts>): Promise<Target> {
  const server = await startPprofServer('127.0.0.1:0', log, timeouts);
  return {
    name: 'profiling',
    port: portOf(server.address),
    request: get('/debug/pprof/'),
    post: { head: postHead('/debug/pprof/heap'), bodyStart: '{' },
    okStatus: 200,
    close: () => server.close(),
  };
}

/** Starts all five listeners; `timeouts` (short ones, in tests) replaces each listener's own bounds. */
export async function startTargets(timeouts?: Partial<ListenerTimeouts>, log: Logger = createLogger({ level: 'silent' })): Promise<Target[]> {
  return Promise.all([mainListener, connectListener, invalidationListener, metricsListener, pprofListener].map((start) => start(log, timeouts)));
}
