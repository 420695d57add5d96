import cluster from 'node:cluster';

/**
 * Runs `serve` in `count` worker processes sharing the listening port
 * (node:cluster). The primary restarts a worker that dies unexpectedly and
 * passes stop signals on.
 */
export async function runWorkers(count: number, serve: () => Promise<void>): Promise<void> {
  if (cluster.isWorker) {
    await serve();
    return;
  }
  let stopping = false;
  for (let i = 0; i < count; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    cluster.fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
