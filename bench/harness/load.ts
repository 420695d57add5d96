/**
 * Driving load with autocannon (in this process, on the load core). One
 * continuous run covers warm-up and measurement; the measurement is a
 * window inside it, so both of its ends are in steady state (as many
 * requests in flight at the start as at the end) and nothing of the
 * warm-up or of the requests cut off at the stop leaks into it.
 */
import autocannon from 'autocannon';
import type { BenchRequest } from './scenario.js';

/** Options of one load run. */
export interface LoadOptions {
  readonly baseUrl: string;
  readonly request: BenchRequest;
  readonly connections: number;
}

/** Counters of a load run so far. */
export interface LoadCounters {
  /** Responses received. */
  readonly responses: number;
  /** Response bytes received (headers included). */
  readonly bytes: number;
  /** Non-2xx responses, connection errors and timeouts. */
  readonly errors: number;
}

/** A running load. */
export class LoadRun {
  private responses = 0;
  private bytes = 0;
  private errors = 0;
  private recording = false;
  /** Latencies (ms) of responses received while recording. */
  readonly latencies: number[] = [];
  private readonly done: Promise<void>;
  private readonly instance: autocannon.Instance;

  constructor(options: LoadOptions) {
    let finish: () => void = () => undefined;
    this.done = new Promise((resolve) => (finish = resolve));
    this.instance = autocannon(
      {
        url: `${options.baseUrl}${options.request.path}`,
        method: options.request.method,
        headers: { ...options.request.headers },
        body: options.request.body,
        connections: options.connections,
        pipelining: 1,
        // Stopped by `stop()`; the duration only bounds a run whose stop never comes.
        duration: 3600,
        timeout: 10,
      },
      () => finish(),
    );
    this.instance.on('response', (_client, statusCode, resBytes, responseTime) => {
      this.responses++;
      this.bytes += resBytes;
      if (statusCode < 200 || statusCode > 299) this.errors++;
      if (this.recording) this.latencies.push(responseTime);
    });
    this.instance.on('reqError', () => this.errors++);
  }

  counters(): LoadCounters {
    return { responses: this.responses, bytes: this.bytes, errors: this.errors };
  }

  /** Starts or stops keeping latencies. */
  record(on: boolean): void {
    this.recording = on;
  }

  async stop(): Promise<void> {
    this.instance.stop();
    await this.done;
  }
}

/** The `p` quantile (0..1) of unsorted values; undefined when empty. */
export function quantile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}
