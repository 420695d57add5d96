import type { Worker } from 'node:cluster';
import { BUS_DELIVERY_TIMEOUT_MS, type BusDelivered, type BusMessage } from './cluster-bus.js';

/** A relayed message still waiting for acknowledgements. */
interface Delivery {
  readonly publisher: Worker;
  /** The publisher's own id for the message. */
  readonly id: number;
  readonly waitingOn: Set<Worker>;
  readonly timer: NodeJS.Timeout;
}

/**
 * The primary's side of the cluster bus (cluster-bus.ts): relays a worker's
 * message to every other live worker and, when the publisher asked for it
 * (the message has an id), tells the publisher once every one of them has
 * acknowledged it, has exited, or BUS_DELIVERY_TIMEOUT_MS has passed.
 * Relayed messages carry the relay's own id: publishers number theirs each
 * on their own, so their ids may clash.
 */
export class BusRelay {
  private readonly deliveries = new Map<number, Delivery>();
  private nextId = 0;

  constructor(private readonly workers: () => Iterable<Worker>) {}

  relay(from: Worker, message: BusMessage): void {
    const others = [...this.workers()].filter((worker) => worker !== from && worker.isConnected());
    if (message.id === undefined) {
      for (const worker of others) worker.send(message, () => undefined);
      return;
    }
    const relayId = this.nextId++;
    // The publisher stops waiting after this anyway: the entry goes then too.
    const timer = setTimeout(() => this.delivered(relayId), BUS_DELIVERY_TIMEOUT_MS);
    timer.unref();
    this.deliveries.set(relayId, { publisher: from, id: message.id, waitingOn: new Set(others), timer });
    const relayed: BusMessage = { ...message, id: relayId };
    for (const worker of others) {
      // A worker may exit between the check and the send: the callback takes that error instead of an 'error' event.
      worker.send(relayed, (error: Error | null) => {
        if (error) this.acknowledged(relayId, worker);
      });
    }
    if (others.length === 0) this.delivered(relayId);
  }

  /** `by` ran its handlers for the relayed message `relayId`. */
  acknowledged(relayId: number, by: Worker): void {
    const pending = this.deliveries.get(relayId);
    if (!pending) return;
    pending.waitingOn.delete(by);
    if (pending.waitingOn.size === 0) this.delivered(relayId);
  }

  /** A worker gone acknowledges nothing more (what waited on it is delivered to the others), nor waits for anything. */
  exited(worker: Worker): void {
    for (const [relayId, pending] of [...this.deliveries]) {
      if (pending.publisher === worker) {
        clearTimeout(pending.timer);
        this.deliveries.delete(relayId);
      } else this.acknowledged(relayId, worker);
    }
  }

  private delivered(relayId: number): void {
    const pending = this.deliveries.get(relayId);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.deliveries.delete(relayId);
    const { publisher, id } = pending;
    if (publisher.isConnected()) publisher.send({ switchyardBusDelivered: true, id } satisfies BusDelivered, () => undefined);
  }
}
