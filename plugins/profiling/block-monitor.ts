import { performance } from 'node:perf_hooks';

/** How often the heartbeat timer is due. */
export const HEARTBEAT_MS = 10;

/** A heartbeat later than this marks the event loop as blocked for the time it was late. */
export const BLOCK_THRESHOLD_MS = 10;

/** Time since the epoch in microseconds, on the clock the time profiler stamps samples with. */
function nowMicros(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

/**
 * Finds the stretches when the event loop could not run a timer that was
 * due: a heartbeat timer is due every 10 ms, and when it fires more than
 * 10 ms late, the time between when it was due and when it ran is a blocked
 * window. Samples of the time profiler taken inside a window show what kept
 * the loop busy.
 */
export class EventLoopBlockMonitor {
  private readonly windows: Array<readonly [startMicros: number, endMicros: number]> = [];
  private timer: NodeJS.Timeout | undefined;
  private lastMicros = 0;

  start(): void {
    this.lastMicros = nowMicros();
    this.timer = setInterval(() => this.check(), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Records lateness up to now (also called before the profile is cut, so a block just ended counts). */
  check(): void {
    const now = nowMicros();
    const due = this.lastMicros + HEARTBEAT_MS * 1000;
    if (now - due > BLOCK_THRESHOLD_MS * 1000) this.windows.push([due, now]);
    this.lastMicros = now;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Whether a sample taken at this time fell inside a blocked window. */
  blockedAt(timestampMicros: number): boolean {
    return this.windows.some(([start, end]) => timestampMicros >= start && timestampMicros <= end);
  }

  /** Number of blocked windows seen. */
  get blockCount(): number {
    return this.windows.length;
  }
}
