/**
 * The bound on what the router holds for one slow client
 * (`subscriptions.max_queued_bytes`): a client is one WebSocket connection
 * (all its subscriptions) or one SSE or multipart response. What counts is
 * the events that arrived from the subgraph for it and that it has not taken
 * yet (their size as the subgraph sent them; each transport takes the next
 * event only once the previous answer was handed to the socket), plus what
 * sits in its socket's send buffer. The bound applies only while that send
 * buffer holds data (the client's kernel buffers are full: it is not
 * keeping up): a subgraph's burst queued behind the router's own work (the
 * events' entity fetches) for a client that reads everything does not count
 * against it; that burst is held back instead (the shared upstream stops
 * reading the subgraph, upstream-hub.ts). Past the bound the transport drops the client
 * (docs/subscriptions.md, "Slow clients"), so a client that stops reading
 * cannot make the router buffer without end, and clients sharing its
 * subgraph subscription keep receiving.
 */

export class ClientBuffer {
  private queued = 0;
  private overflowed = false;

  /**
   * @param limit bytes; 0 = no limit
   * @param inSocket bytes waiting in the client's socket (WebSocket `bufferedAmount`, response `writableLength`)
   * @param onOverflow called once, when the bound is first passed
   */
  constructor(
    readonly limit: number,
    private readonly inSocket: () => number,
    private readonly onOverflow: (queuedBytes: number) => void,
  ) {}

  /** Whether the client was dropped for passing the bound. */
  get exceeded(): boolean {
    return this.overflowed;
  }

  /** Counts an event of `bytes` queued for the client. */
  add(bytes: number): void {
    this.queued += bytes;
    this.check();
  }

  /**
   * Drops the client if it is past the bound while its socket holds data;
   * called on each queued event and, while its queue holds up the subgraph
   * subscription (upstream-hub.ts), again until it drains.
   */
  check(): void {
    if (this.limit === 0 || this.overflowed) return;
    const inSocket = this.inSocket();
    if (inSocket === 0) return;
    const total = this.queued + inSocket;
    if (total <= this.limit) return;
    this.overflowed = true;
    this.onOverflow(total);
  }

  /** The client took (or dropped) `bytes` of queued events. */
  remove(bytes: number): void {
    this.queued -= bytes;
  }
}

/** A buffer without a bound (counts, never drops). */
export function unboundedBuffer(): ClientBuffer {
  return new ClientBuffer(
    0,
    () => 0,
    () => undefined,
  );
}

/** The error a stream ends with when its client passed the bound. */
export function clientTooSlowMessage(limit: number): string {
  return `The client read too slowly: more than ${limit} bytes were queued for it (subscriptions.max_queued_bytes).`;
}
