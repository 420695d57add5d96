import cluster, { type Worker } from 'node:cluster';
import { isBusMessage } from '../kernel/cluster/cluster-bus.js';

/** What the primary process runs beside its workers (the aggregated metrics listener). */
export interface PrimaryServices {
  close(): Promise<void>;
}

/**
 * Runs `serve` in `count` worker processes sharing the listening ports
 * (node:cluster). The primary relays bus messages between workers (so an
 * invalidation reaches every worker's memory cache), restarts a worker that
 * dies unexpectedly, and passes stop signals on. Workers' listeners are
 * guarded like a single process's (listener-guard.ts): no client can end a
 * worker, and a worker going away cannot end the primary.
 */
export async function runWorkers(count: number, serve: () => Promise<void>, primary?: () => Promise<PrimaryServices | undefined>): Promise<void> {
  if (cluster.isWorker) {
    await serve();
    return;
  }
  let stopping = false;
  // Our own count: node:cluster drops a worker from cluster.workers at 'exit'
  // only if its IPC channel closed first, so that map can still hold the last
  // worker when it has exited, and the primary would wait forever.
  const live = new Set<Worker>();
  const fork = (): Worker => {
    const worker = cluster.fork({ SWITCHYARD_WORKERS: String(count) });
    live.add(worker);
    // An unhandled 'error' here would end the primary, and every worker with it.
    worker.on('error', (error: Error) => process.stderr.write(`worker ${worker.process.pid}: ${error.message}\n`));
    return worker;
  };
  for (let i = 0; i < count; i++) fork();
  cluster.on('message', (from, message: unknown) => {
    if (!isBusMessage(message)) return;
    for (const worker of live) {
      // A worker may exit between the check and the send: the callback takes that error instead of an 'error' event.
      if (worker !== from && worker.isConnected()) worker.send(message, () => undefined);
    }
  });
  // Handlers go on before anything is awaited, so no exit or signal is missed while the primary's services start.
  let services: Promise<PrimaryServices | undefined> = Promise.resolve(undefined);
  cluster.on('exit', (worker, code, signal) => {
    live.delete(worker);
    if (stopping) {
      if (live.size === 0) void services.then((started) => started?.close()).finally(() => process.exit(0));
      return;
    }
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const worker of live) worker.process.kill(signal);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  services = primary?.() ?? services;
  await services;
}
