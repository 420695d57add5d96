import { createServer, type Server } from 'node:http';
import type { Logger } from '../logger.js';
import { parseListenAddress, warnIfExposed } from '../router/listen-address.js';
import { bindListener, guardHttpServer, type ListenerTimeouts } from '../router/listener-guard.js';
import type { Metrics } from './metrics.js';

/**
 * The Prometheus listener (`metrics.listen_addr`, `metrics.path`): its own
 * port, GET only. Hostile connections are bounded by the kernel's side-listener
 * defaults (listener-guard.ts); `timeouts` shortens them (tests).
 */
export async function startMetricsServer(
  metrics: Metrics,
  address: string,
  path: string,
  log: Logger,
  timeouts?: Partial<ListenerTimeouts>,
): Promise<{ url: string; close(): Promise<void> }> {
  const { host, port } = parseListenAddress(address);
  const server: Server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (url !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text),
      (error: unknown) => {
        log.error({ err: error }, 'rendering metrics failed');
        res.writeHead(500).end();
      },
    );
  });
  guardHttpServer(server, { name: 'metrics', log, timeouts });
  const bound = await bindListener(server, host, port, { name: 'metrics', log });
  const url = `http://${host}:${bound.port}${path}`;
  log.info({ metrics: url }, 'Metrics listening');
  warnIfExposed(log, 'The metrics listener', host);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
