/**
 * `switchyard router`: loads the config and graph, builds the plugin list,
 * serves until SIGTERM/SIGINT, then reports not ready, keeps serving for
 * `shutdown_delay`, closes its listeners and gives in-flight requests
 * `grace_period` (Router.close), and stops.
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { parseListenAddress } from '../../kernel/router/listen-address.js';
import { EXIT_FAILED, exitForUsageError, writeProblem } from '../cli-support.js';
import type { ServeOptions } from '../serve-router.js';
import { runWorkers } from '../workers.js';

interface RouterOptions extends ServeOptions {
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

async function runRouter(options: RouterOptions): Promise<void> {
  try {
    const { primaryServices, serveRouter } = await import('../serve-router.js');
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
