/**
 * One token bucket per client: a client may spend `requests` at once, and
 * earns them back evenly over `window`. Buckets live in insertion order, so
 * the least recently seen client is the first one forgotten.
 */

/** A limit in effect for one client. */
export interface Limit {
  readonly requests: number;
  /** Milliseconds. */
  readonly window: number;
}

/** What taking one request from a bucket gave. */
export interface Take {
  readonly allowed: boolean;
  /** Whole requests left right now. */
  readonly remaining: number;
  /** When refused: seconds until one request is available again. */
  readonly retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly maxClients: number) {}

  /** Takes one request from the client's bucket, if it has one to give. */
  take(client: string, limit: Limit, now: number): Take {
    const ratePerMs = limit.requests / limit.window;
    let bucket = this.buckets.get(client);
    if (bucket) {
      this.buckets.delete(client);
      bucket.tokens = Math.min(limit.requests, bucket.tokens + (now - bucket.updatedAt) * ratePerMs);
      bucket.updatedAt = now;
    } else {
      bucket = { tokens: limit.requests, updatedAt: now };
      if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(client, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, remaining: Math.floor(bucket.tokens), retryAfterSeconds: 0 };
    }
    return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerMs / 1000)) };
  }

  clear(): void {
    this.buckets.clear();
  }
}
