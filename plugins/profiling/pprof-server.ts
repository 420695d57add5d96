import type { IncomingMessage, ServerResponse } from 'node:http';
import { RouterError, isLoopbackHost, startSideListener, toGraphQLErrorJSON, type ListenerTimeouts, type Logger, type SideListener } from '../../src/index.js';
import { acquireHeapSampler } from './heap-sampler.js';
import { createRoutes, type RouteAnswer } from './pprof-routes.js';

/** The running profiling listener. */
export interface PprofServer {
  /** Bound address, `host:port` (the real port when 0 was asked for). */
  readonly address: string;
  /** Stops listening, aborts running captures, stops the heap sampler. */
  close(): Promise<void>;
}

const PREFIX = '/debug/pprof/';

function errorAnswer(error: RouterError): RouteAnswer {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (error.status === 405) headers.allow = 'GET';
  return { status: error.status ?? 500, headers, body: JSON.stringify({ errors: [toGraphQLErrorJSON(error)] }) };
}

/** The startup warning for a listener on `host`; stronger when it is reachable beyond this machine. */
export function exposureWarning(host: string): string {
  return isLoopbackHost(host)
    ? 'Profiling endpoints exposed on loopback; do not enable PPROF_ADDR in production'
    : 'Profiling endpoints exposed beyond loopback: anyone who can reach this address can read profiles of the router';
}

/**
 * The `PPROF_ADDR` listener: `/debug/pprof/*` on its own port, GET only.
 * A bare `:port` binds loopback. Logs a warning that the endpoints are
 * exposed, a stronger one when they are reachable beyond this machine.
 * Hostile connections are bounded by the kernel's side-listener defaults
 * (a capture in progress keeps its connection); `timeouts` shortens them (tests).
 */
export async function startPprofServer(address: string, log: Logger, timeouts?: Partial<ListenerTimeouts>): Promise<PprofServer> {
  const routes = createRoutes();
  const closing = new AbortController();
  const releaseHeap = acquireHeapSampler();

  async function answer(req: IncomingMessage, signal: AbortSignal): Promise<RouteAnswer> {
    const url = new URL(req.url ?? '/', 'http://pprof.local');
    const path = url.pathname === '/debug/pprof' ? PREFIX : url.pathname;
    const route = path.startsWith(PREFIX) ? routes.get(path.slice(PREFIX.length)) : undefined;
    if (!route) throw new RouterError('PROFILING_NOT_FOUND', `no profile at ${path.slice(0, 100)}; see GET ${PREFIX}`, { status: 404 });
    if (req.method !== 'GET') throw new RouterError('PROFILING_METHOD_NOT_ALLOWED', `${req.method ?? ''} is not allowed; use GET`, { status: 405 });
    return route({ params: url.searchParams, signal });
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableEnded) gone.abort();
    };
    res.on('close', onClose);
    let result: RouteAnswer;
    try {
      result = await answer(req, AbortSignal.any([gone.signal, closing.signal]));
    } catch (error) {
      if (gone.signal.aborted || closing.signal.aborted) return;
      if (error instanceof RouterError) {
        result = errorAnswer(error);
      } else {
        log.error({ err: error, path: req.url }, 'Profile capture failed');
        const message = `the profile could not be taken: ${error instanceof Error ? error.message : String(error)}`;
        result = errorAnswer(new RouterError('PROFILING_CAPTURE_FAILED', message, { status: 500 }));
      }
    }
    res.off('close', onClose);
    if (res.destroyed) return;
    // With --workers, the cluster module shares this port too: the header tells which process answered.
    res.writeHead(result.status, { ...result.headers, 'cache-control': 'no-store', 'x-switchyard-pid': String(process.pid) }).end(result.body);
  }

  let listener: SideListener;
  try {
    listener = await startSideListener({
      name: 'profiling',
      plugin: 'profiling',
      address,
      purpose: 'the profiling endpoints',
      // The stronger warning, beyond loopback; the loopback one is logged below.
      exposureWarning: exposureWarning('0.0.0.0'),
      handler: (req, res) => void onRequest(req, res),
      log,
      timeouts,
    });
  } catch (error) {
    releaseHeap();
    throw error;
  }
  if (!listener.exposed) log.warn({ listen_addr: listener.address }, exposureWarning(listener.host));
  return {
    address: listener.address,
    async close() {
      closing.abort();
      // Captures in flight were just aborted and answer nothing: no grace to wait for.
      await listener.close(0);
      releaseHeap();
    },
  };
}
