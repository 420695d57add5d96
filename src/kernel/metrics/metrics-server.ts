import type { IncomingMessage, ServerResponse } from 'node:http';
import { startSideListener } from '../listen/side-listener.js';
import type { Logger } from '../logger.js';
import type { ListenerTimeouts } from '../router/listener-guard.js';
import type { Metrics } from './metrics.js';

/**
 * The Prometheus listener (`metrics.listen_addr`, `metrics.path`): its own
 * port, GET only, a kernel side listener (bounds, bind errors, exposure
 * warning, graceful close: src/kernel/listen/side-listener.ts); `timeouts`
 * shortens the bounds (tests). Under `--workers` only the primary starts it.
 */
export async function startMetricsServer(
  metrics: Metrics,
  address: string,
  path: string,
  log: Logger,
  timeouts?: Partial<ListenerTimeouts>,
): Promise<{ url: string; close(): Promise<void> }> {
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
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
  };
  const listener = await startSideListener({
    name: 'metrics',
    address,
    configKey: 'metrics.listen_addr',
    purpose: 'the Prometheus metrics',
    label: 'The metrics listener',
    handler: answer,
    log,
    timeouts,
  });
  const url = `${listener.url}${path}`;
  log.info({ metrics: url }, 'Metrics listening');
  return { url, close: () => listener.close() };
}
