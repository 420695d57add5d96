/**
 * `switchyard router`: loads the config and graph, builds the plugin list,
 * serves until SIGTERM/SIGINT, then reports not ready, keeps serving for
 * `shutdown_delay`, closes its listeners and gives in-flight requests
 * `grace_period` (Router.close), and stops.
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { createRouter } from '../../kernel/router/router.js';
import { parseListenAddress } from '../../kernel/router/listen-address.js';
import { EXIT_FAILED, exitForUsageError, writeProblem } from '../cli-support.js';
import { graphDrivenPlugins } from '../builtin-plugins.js';
import { loadRouterSetup } from '../router-setup.js';
import { runWorkers, type PrimaryServices } from '../workers.js';
import { createLogger } from '../../kernel/logger.js';
import { createClusterMetrics } from '../../kernel/metrics/metrics.js';
import { startMetricsServer } from '../../kernel/metrics/metrics-server.js';

interface RouterOptions {
  config?: string;
  supergraph?: string;
  listenAddr?: string;
  workers: number;
}

/** The most `--workers` a machine takes: 4 per CPU (more only adds memory and context switches). */
function maxWorkers(): number {
  return 4 * availableParallelism();
}

/** `--workers <n>`: a plain whole number (digits only, no `1e1`) from 1 to maxWorkers(). */
function workerCount(value: string): number {
  const max = maxWorkers();
  const n = /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : 0;
  if (n < 1 || n > max) throw new InvalidArgumentError(`expected a whole number from 1 to ${max} (4 per CPU), written in digits`);
  return n;
}

function listenAddress(value: string): string {
  try {
    parseListenAddress(value);
  } catch {
    throw new InvalidArgumentError('expected host:port, for example 127.0.0.1:3002');
  }
  return value;
}

/** Starts one router process and keeps it until a stop signal. */
export async function serveRouter(options: RouterOptions): Promise<void> {
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
async function primaryServices(options: RouterOptions): Promise<PrimaryServices | undefined> {
  const setup = await loadRouterSetup({ configPath: options.config, supergraph: options.supergraph, listenAddr: options.listenAddr });
  const { metrics } = setup.config.core;
  if (!metrics.enabled) return undefined;
  const log = createLogger({ level: process.env.LOG_LEVEL ?? setup.config.core.log_level });
  return startMetricsServer(await createClusterMetrics(), metrics.listen_addr, metrics.path, log);
}

async function runRouter(options: RouterOptions): Promise<void> {
  try {
    if (options.workers > 1)
      await runWorkers(
        options.workers,
        () => serveRouter(options),
        () => primaryServices(options),
      );
    else await serveRouter(options);
  } catch (error) {
    writeProblem(error);
    process.exit(EXIT_FAILED);
  }
}

export function registerRouterCommand(program: Command): Command {
  return program
    .command('router')
    .description('Serve the federated graph (reads ./router.config.yaml when neither -c nor --supergraph is given)')
    .option('-c, --config <file>', 'router config file (router.config.yaml)')
    .option('--supergraph <file|url>', 'execution config JSON or supergraph SDL, by path or http(s) URL')
    .option('--listen-addr <host:port>', 'address to listen on (overrides listen_addr)', listenAddress)
    .option('--workers <n>', 'worker processes sharing the port (1 to 4 per CPU)', workerCount, 1)
    .exitOverride(exitForUsageError)
    .action(runRouter);
}
