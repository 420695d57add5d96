import cluster from 'node:cluster';

/**
 * Messages between the worker processes of one router (`--workers N`): a
 * plugin publishes on a topic and the same plugin in every other worker
 * receives it. With one process there is nobody else: publishing is a no-op.
 */
export interface ClusterBus {
  /** Worker processes serving this router (1 without `--workers`). */
  readonly workers: number;
  /** Delivers `payload` (JSON-serializable) to `topic`'s subscribers in every other worker. */
  publish(topic: string, payload: unknown): void;
  /** Called for every message another worker publishes on `topic`; returns an unsubscribe function. */
  subscribe(topic: string, handler: (payload: unknown) => void): () => void;
}

/** The envelope of bus messages on the cluster IPC channel. */
export interface BusMessage {
  readonly switchyardBus: true;
  readonly topic: string;
  readonly payload: unknown;
}

export function isBusMessage(message: unknown): message is BusMessage {
  return typeof message === 'object' && message !== null && (message as { switchyardBus?: unknown }).switchyardBus === true;
}

/** The bus of this process: over cluster IPC in a worker, a no-op otherwise. */
export function createClusterBus(): ClusterBus {
  const handlers = new Map<string, Set<(payload: unknown) => void>>();
  const workers = Number(process.env.SWITCHYARD_WORKERS ?? 1);
  if (!cluster.isWorker || !process.send) {
    return {
      workers: 1,
      publish() {},
      subscribe: (topic, handler) => add(handlers, topic, handler),
    };
  }
  process.on('message', (message: unknown) => {
    if (!isBusMessage(message)) return;
    for (const handler of handlers.get(message.topic) ?? []) handler(message.payload);
  });
  return {
    workers,
    publish(topic, payload) {
      const message: BusMessage = { switchyardBus: true, topic, payload };
      process.send?.(message);
    },
    subscribe: (topic, handler) => add(handlers, topic, handler),
  };
}

function add(handlers: Map<string, Set<(payload: unknown) => void>>, topic: string, handler: (payload: unknown) => void): () => void {
  const set = handlers.get(topic) ?? new Set();
  set.add(handler);
  handlers.set(topic, set);
  return () => set.delete(handler);
}
