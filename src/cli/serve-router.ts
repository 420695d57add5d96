/**
 * What `switchyard router` runs once its flags are checked: one router
 * process, or the primary's own services under `--workers`. Its own module
 * so the other commands start without the router and its plugins (main.ts).
 */
import { createRouter } from '../kernel/router/router.js';
import { createLogger } from '../kernel/logger.js';
import { createClusterMetrics } from '../kernel/metrics/metrics.js';
import { startMetricsServer } from '../kernel/metrics/metrics-server.js';
import { EXIT_FAILED, writeProblem } from './cli-support.js';
import { graphDrivenPlugins } from './builtin-plugins.js';
import { loadRouterSetup } from './router-setup.js';
import type { PrimaryServices } from './workers.js';

/** The config, graph and address flags of `switchyard router`. */
export interface ServeOptions {
  config?: string;
  supergraph?: string;
  listenAddr?: string;
}

/** Starts one router process and keeps it until a stop signal. */
export async function serveRouter(options: ServeOptions): Promise<void> {
  const setup = await loadRouterSetup({ configPath: options.config, supergraph: options.supergraph, listenAddr: options.listenAddr });
  if (!setup.graph) {
    throw new Error('no graph to serve: set execution_config.file.path in the config or pass --supergraph <file|url>');
  }
  const plugins = [...setup.plugins, ...(await graphDrivenPlugins(setup.plugins))];
  const router = await createRouter({ config: setup.config, plugins, graph: setup.graph });
  await router.listen();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const { shutdown_delay, grace_period } = setup.config.core;
    router.log.info({ signal, shutdown_delay_ms: shutdown_delay, grace_period_ms: grace_period }, 'Router stopping: finishing in-flight requests');
    router
      .close()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        writeProblem(error);
        process.exit(EXIT_FAILED);
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** What the primary serves under `--workers`: the metrics of every worker, aggregated. */
export async function primaryServices(options: ServeOptions): Promise<PrimaryServices | undefined> {
  const setup = await loadRouterSetup({ configPath: options.config, supergraph: options.supergraph, listenAddr: options.listenAddr });
  const { metrics } = setup.config.core;
  if (!metrics.enabled) return undefined;
  const log = createLogger({ level: process.env.LOG_LEVEL ?? setup.config.core.log_level });
  return startMetricsServer(await createClusterMetrics(), metrics.listen_addr, metrics.path, log);
}
