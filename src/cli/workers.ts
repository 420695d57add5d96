import cluster, { type Worker } from 'node:cluster';
import { BusRelay } from '../kernel/cluster/bus-relay.js';
import { isBusAck, isBusMessage } from '../kernel/cluster/cluster-bus.js';

/** What the primary process runs beside its workers (the aggregated metrics listener). */
export interface PrimaryServices {
  close(): Promise<void>;
}

/** A worker tells the primary it is serving (its listeners are up). */
interface WorkerReady {
  readonly switchyardWorkerReady: true;
}

function isWorkerReady(message: unknown): message is WorkerReady {
  return typeof message === 'object' && message !== null && (message as { switchyardWorkerReady?: unknown }).switchyardWorkerReady === true;
}

/**
 * Restarts of workers that died after serving wait longer the more of them
 * died lately: 100 ms for the first in a minute, doubling up to 10 s, so a
 * worker that keeps crashing does not spin the machine.
 */
function restartDelay(recentExits: number): number {
  return Math.min(10_000, 100 * 2 ** Math.max(0, recentExits - 1));
}

const RECENT_EXITS_MS = 60_000;

/**
 * Runs `serve` in `count` worker processes sharing the listening ports
 * (node:cluster). The primary relays bus messages between workers (so an
 * invalidation reaches every worker's memory cache) and tells the publisher
 * once the others ran their handlers, restarts a worker that dies after it
 * served (sooner or later as above), stops the router with exit code 1 when
 * no worker can start (a port in use, a bad graph: as a single process
 * would), and passes stop signals on. Workers' listeners are
 * guarded like a single process's (listener-guard.ts): no client can end a
 * worker, and a worker going away cannot end the primary.
 */
export async function runWorkers(count: number, serve: () => Promise<void>, primary?: () => Promise<PrimaryServices | undefined>): Promise<void> {
  if (cluster.isWorker) {
    await serve();
    process.send?.({ switchyardWorkerReady: true } satisfies WorkerReady, undefined, undefined, () => undefined);
    return;
  }
  let stopping = false;
  /** The signal passed on to the workers when stopping. */
  let stopSignal: NodeJS.Signals | undefined;
  let finishing = false;
  let exitCode = 0;
  let served = false;
  // Our own count: node:cluster drops a worker from cluster.workers at 'exit'
  // only if its IPC channel closed first, so that map can still hold the last
  // worker when it has exited, and the primary would wait forever.
  const live = new Set<Worker>();
  const ready = new WeakSet<Worker>();
  const exits: number[] = [];
  const fork = (): Worker => {
    const worker = cluster.fork({ SWITCHYARD_WORKERS: String(count) });
    live.add(worker);
    // An unhandled 'error' here would end the primary, and every worker with it.
    worker.on('error', (error: Error) => process.stderr.write(`worker ${worker.process.pid}: ${error.message}\n`));
    return worker;
  };
  for (let i = 0; i < count; i++) fork();

  const bus = new BusRelay(() => live);

  // Handlers go on before anything is awaited, so no exit or signal is missed while the primary's services start.
  let services: Promise<PrimaryServices | undefined> = Promise.resolve(undefined);
  /** Restarts waiting out their delay: a stop cancels them. */
  const restarts = new Set<NodeJS.Timeout>();
  /** Workers that exited before any worker served, while others were still starting (not started again yet). */
  let failedStarts = 0;
  /** Starts a worker in place of `gone`, after a delay that grows with the deaths of the last minute. */
  const restartLater = (gone: string): void => {
    const now = Date.now();
    exits.push(now);
    while (exits.length > 0 && exits[0]! < now - RECENT_EXITS_MS) exits.shift();
    const delay = restartDelay(exits.length);
    process.stderr.write(`${gone}; starting another in ${delay} ms\n`);
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (!stopping) fork();
    }, delay);
    restarts.add(timer);
  };
  cluster.on('message', (from, message: unknown) => {
    if (isWorkerReady(message)) {
      ready.add(from);
      served = true;
      // Workers that failed to start while another was still starting: the router serves after all, so they are started again.
      for (; failedStarts > 0; failedStarts--) restartLater('a worker that could not start');
    } else if (isBusMessage(message)) bus.relay(from, message);
    else if (isBusAck(message)) bus.acknowledged(message.id, from);
  });
  /** Once no worker is left: the primary's own services close, then the process exits. */
  const finish = (): void => {
    if (finishing) return;
    finishing = true;
    void services.then((started) => started?.close()).finally(() => process.exit(exitCode));
  };
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    stopSignal = signal;
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    for (const worker of live) worker.process.kill(signal);
    // Every worker may be gone already (waiting to be started again): then nothing else would end the primary.
    if (live.size === 0) finish();
  };
  cluster.on('exit', (worker, code, signal) => {
    live.delete(worker);
    bus.exited(worker);
    if (stopping) {
      // A worker that failed on the way down, or died of another signal than the one passed on (the OOM killer's SIGKILL).
      if ((code !== 0 && code !== null) || (signal !== null && signal !== stopSignal)) exitCode = 1;
      if (live.size === 0) finish();
      return;
    }
    if (!ready.has(worker) && !served) {
      process.stderr.write(`worker ${worker.process.pid} could not start (${signal ?? code})\n`);
      // Decided once every worker has either failed or served: a worker's ready message and another's exit
      // travel on different channels, so one failing first says nothing yet of the others.
      failedStarts++;
      if (live.size > 0) return;
      // None could start: starting them again would fail the same way, forever.
      process.stderr.write('no worker could start; stopping the router\n');
      exitCode = 1;
      stop('SIGTERM');
      return;
    }
    restartLater(`worker ${worker.process.pid} exited (${signal ?? code})`);
  });
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  services = primary?.() ?? services;
  await services;
}
