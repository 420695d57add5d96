import cluster from 'node:cluster';

/**
 * Messages between the worker processes of one router (`--workers N`): a
 * plugin publishes on a topic and the same plugin in every other worker
 * receives it. With one process there is nobody else: publishing is a no-op.
 */
export interface ClusterBus {
  /** Worker processes serving this router (1 without `--workers`). */
  readonly workers: number;
  /**
   * Delivers `payload` (JSON-serializable) to `topic`'s subscribers in every
   * other worker. Resolves once every other live worker has run its
   * handlers for it (a handler's promise included), or after
   * BUS_DELIVERY_TIMEOUT_MS: never rejects. With one process, at once.
   */
  publish(topic: string, payload: unknown): Promise<void>;
  /** Called for every message another worker publishes on `topic`; returns an unsubscribe function. */
  subscribe(topic: string, handler: (payload: unknown) => void | Promise<void>): () => void;
}

/** How long a publisher waits for the other workers' handlers (a worker that hangs must not hold an answer up). */
export const BUS_DELIVERY_TIMEOUT_MS = 500;

/** The envelope of bus messages on the cluster IPC channel; `id` asks the receivers to acknowledge it. */
export interface BusMessage {
  readonly switchyardBus: true;
  readonly topic: string;
  readonly payload: unknown;
  readonly id?: number;
}

/** A worker has run its handlers for message `id` (worker → primary). */
export interface BusAck {
  readonly switchyardBusAck: true;
  readonly id: number;
}

/** Every other worker has acknowledged message `id`, or is gone (primary → publisher). */
export interface BusDelivered {
  readonly switchyardBusDelivered: true;
  readonly id: number;
}

export function isBusMessage(message: unknown): message is BusMessage {
  return typeof message === 'object' && message !== null && (message as { switchyardBus?: unknown }).switchyardBus === true;
}

export function isBusAck(message: unknown): message is BusAck {
  return typeof message === 'object' && message !== null && (message as { switchyardBusAck?: unknown }).switchyardBusAck === true;
}

function isBusDelivered(message: unknown): message is BusDelivered {
  return typeof message === 'object' && message !== null && (message as { switchyardBusDelivered?: unknown }).switchyardBusDelivered === true;
}

type Handler = (payload: unknown) => void | Promise<void>;

/** The bus of this process: over cluster IPC in a worker, a no-op otherwise. */
export function createClusterBus(): ClusterBus {
  const handlers = new Map<string, Set<Handler>>();
  const workers = Number(process.env.SWITCHYARD_WORKERS ?? 1);
  if (!cluster.isWorker || !process.send) {
    return {
      workers: 1,
      publish: () => Promise.resolve(),
      subscribe: (topic, handler) => add(handlers, topic, handler),
    };
  }
  /** Publications waiting for the primary's word that every other worker ran its handlers. */
  const waiting = new Map<number, () => void>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (isBusDelivered(message)) {
      waiting.get(message.id)?.();
      return;
    }
    if (!isBusMessage(message)) return;
    const id = message.id;
    const runs = [...(handlers.get(message.topic) ?? [])].map(async (handler) => handler(message.payload));
    // A handler that fails still counts as delivered: the publisher waits for the others, not for success.
    void Promise.allSettled(runs).then(() => {
      if (id !== undefined) process.send?.({ switchyardBusAck: true, id } satisfies BusAck, undefined, undefined, () => undefined);
    });
  });
  return {
    workers,
    publish(topic, payload) {
      const id = nextId++;
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        };
        const timer = setTimeout(done, BUS_DELIVERY_TIMEOUT_MS);
        timer.unref();
        waiting.set(id, done);
        const message: BusMessage = { switchyardBus: true, topic, payload, id };
        // A closed channel (the primary going away) fails the send: then there is nobody to wait for.
        process.send?.(message, undefined, undefined, (error: Error | null) => {
          if (error) done();
        });
      });
    },
    subscribe: (topic, handler) => add(handlers, topic, handler),
  };
}

function add(handlers: Map<string, Set<Handler>>, topic: string, handler: Handler): () => void {
  const set = handlers.get(topic) ?? new Set();
  set.add(handler);
  handlers.set(topic, set);
  return () => set.delete(handler);
}
