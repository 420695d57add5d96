/** Timing a synchronous piece of work, bounded by iterations and wall time. */

/** Per-call times of one measured piece of work. */
export interface Timing {
  readonly name: string;
  readonly iterations: number;
  /** Microseconds per call. */
  readonly medianUs: number;
  readonly p95Us: number;
  readonly minUs: number;
}

/** Bounds of one measurement. */
export interface TimingBounds {
  /** Stop after this many calls; default 1000. */
  readonly maxIterations?: number;
  /** Stop after this much wall time (ms), once `minIterations` ran; default 2000. */
  readonly maxMs?: number;
  /** Default 5. */
  readonly minIterations?: number;
  /**
   * Calls timed together as one sample, for work shorter than the clock's
   * resolution; default 1.
   */
  readonly batch?: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Times `work` (called with the call's index); `prepare` runs untimed before each sample. */
export function timeWork(name: string, work: (i: number) => unknown, bounds: TimingBounds = {}, prepare?: () => void): Timing {
  const { maxIterations = 1000, maxMs = 2000, minIterations = 5, batch = 1 } = bounds;
  const samples: number[] = [];
  const deadline = performance.now() + maxMs;
  let calls = 0;
  let sink: unknown;
  while (samples.length < minIterations || (calls < maxIterations && performance.now() < deadline)) {
    prepare?.();
    const started = performance.now();
    for (let i = 0; i < batch; i++) sink = work(calls + i);
    samples.push(((performance.now() - started) * 1000) / batch);
    calls += batch;
  }
  // Keep the result observable so the work cannot be optimized away.
  if (sink === Symbol.for('never')) console.log(sink);
  samples.sort((a, b) => a - b);
  return { name, iterations: calls, medianUs: percentile(samples, 0.5), p95Us: percentile(samples, 0.95), minUs: samples[0]! };
}
