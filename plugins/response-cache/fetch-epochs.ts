import type { SubgraphRequest } from '../../src/index.js';

/** A fetch's claim on an epoch; `end()` when its answer arrived. */
export interface FetchEpoch {
  readonly epoch: number;
  end(): void;
}

interface InFlight {
  readonly epoch: Promise<number>;
  readonly startedAt: number;
  users: number;
}

/**
 * The epoch each fetch's writes are checked against (the write guard).
 * Identical fetches in flight share one subgraph call (single flight), so
 * they share the epoch read by the first of them: the one read before that
 * call began (one store read for them all). Fetches single flight shares
 * although they differ here (each its own trace context) are covered by the
 * answer's own date (`callEpochs` in `fetch-hook.ts`). An entry older than
 * `maxAgeMs` (its fetch failed, so it was never ended) is not reused.
 */
export class FetchEpochs {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly read: () => Promise<number>,
    private readonly maxAgeMs: number,
  ) {}

  async begin(request: SubgraphRequest): Promise<FetchEpoch> {
    const identity = `${request.subgraph}\0${request.query}\0${JSON.stringify(request.variables)}\0${JSON.stringify(request.headers)}`;
    const now = Date.now();
    let flight = this.inFlight.get(identity);
    if (!flight || now - flight.startedAt > this.maxAgeMs) {
      if (this.inFlight.size > 1000) this.sweep(now);
      flight = { epoch: this.read(), startedAt: now, users: 0 };
      this.inFlight.set(identity, flight);
    }
    flight.users++;
    const current = flight;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (--current.users <= 0 && this.inFlight.get(identity) === current) this.inFlight.delete(identity);
    };
    try {
      return { epoch: await current.epoch, end };
    } catch (error) {
      end();
      throw error;
    }
  }

  private sweep(now: number): void {
    for (const [identity, flight] of this.inFlight) if (now - flight.startedAt > this.maxAgeMs) this.inFlight.delete(identity);
  }
}
