import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../src/index.js';
import type { ProfileUpload, PushResult } from './ingest-client.js';

/** Options of `UploadQueue`. */
export interface UploadQueueOptions {
  /** Sends one upload; must not throw. */
  readonly send: (upload: ProfileUpload, signal: AbortSignal) => Promise<PushResult>;
  readonly log: Logger;
  /** Wait before the first retry; doubles per failure. */
  readonly baseDelayMs: number;
  /** Longest wait between retries. */
  readonly maxDelayMs: number;
  /** Profiles kept waiting at most (the oldest is dropped beyond). Default: 8. */
  readonly maxItems?: number;
  /** Bytes kept waiting at most (the oldest is dropped beyond). Default: 16 MiB. */
  readonly maxBytes?: number;
}

/** A warning of one kind is repeated at most this often while a problem lasts. */
const WARN_EVERY_MS = 60_000;

/**
 * Pushes profiles one at a time, in order. A profile server that is down or
 * answers 5xx/408/429 is retried with exponential backoff; other 4xx answers
 * drop the profile (retrying cannot help). Memory stays bounded: beyond
 * `maxItems` or `maxBytes` the oldest waiting profile is dropped. Nothing
 * here throws into the router; problems are logged, sampled.
 */
export class UploadQueue {
  private readonly waiting: ProfileUpload[] = [];
  private waitingBytes = 0;
  private draining = false;
  private failures = 0;
  private dropped = 0;
  private readonly lastWarned = new Map<string, number>();
  private readonly stopping = new AbortController();

  constructor(private readonly options: UploadQueueOptions) {}

  /** Number of profiles waiting (not counting one being sent). */
  get size(): number {
    return this.waiting.length;
  }

  push(upload: ProfileUpload): void {
    if (this.stopping.signal.aborted) return;
    const { maxItems = 8, maxBytes = 16 * 1024 * 1024 } = this.options;
    this.waiting.push(upload);
    this.waitingBytes += upload.body.length;
    while (this.waiting.length > maxItems || (this.waitingBytes > maxBytes && this.waiting.length > 1)) {
      const oldest = this.waiting.shift();
      this.waitingBytes -= oldest?.body.length ?? 0;
      this.dropped++;
      this.warn('overflow', { code: 'PROFILE_PUSH_FAILED', dropped: this.dropped }, 'Profile push queue full; dropping the oldest profile');
    }
    if (!this.draining) void this.drain();
  }

  /** Aborts the push in flight and forgets waiting profiles. */
  stop(): void {
    this.stopping.abort();
    this.waiting.length = 0;
    this.waitingBytes = 0;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    const { signal } = this.stopping;
    try {
      while (this.waiting.length > 0 && !signal.aborted) {
        const upload = this.waiting.shift();
        if (!upload) break;
        this.waitingBytes -= upload.body.length;
        const result = await this.options.send(upload, signal);
        if (signal.aborted) return;
        if (result.ok) {
          if (this.failures > 0) this.options.log.info({ failures: this.failures, dropped: this.dropped }, 'Profile push recovered');
          this.failures = 0;
          this.dropped = 0;
          this.lastWarned.clear();
          continue;
        }
        const fields = { code: 'PROFILE_PUSH_FAILED', kind: upload.kind, reason: result.reason, ...(result.status === undefined ? {} : { status: result.status }) };
        if (!result.retry) {
          this.warn('rejected', fields, 'Profile push rejected by the profile server; profile dropped');
          continue;
        }
        this.failures++;
        const delay = this.retryDelay();
        this.warn('failed', { ...fields, failures: this.failures, retry_in_ms: delay, waiting: this.waiting.length + 1 }, 'Profile push failed; retrying');
        // Back in front: the next attempt sends the same profile (unless newer ones push it out).
        this.waiting.unshift(upload);
        this.waitingBytes += upload.body.length;
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      }
    } finally {
      this.draining = false;
    }
  }

  private retryDelay(): number {
    const { baseDelayMs, maxDelayMs } = this.options;
    const exponential = Math.min(baseDelayMs * 2 ** (this.failures - 1), maxDelayMs);
    // Up to 10% jitter so a fleet of routers does not retry in step.
    return Math.round(exponential * (1 + Math.random() * 0.1));
  }

  private warn(kind: string, fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
    const last = this.lastWarned.get(kind);
    if (last !== undefined && now - last < WARN_EVERY_MS) return;
    this.lastWarned.set(kind, now);
    this.options.log.warn(fields, message);
  }
}
