/**
 * Plugin caches keyed by subgraph fetch texts, which can carry a client's
 * literals (up to limits.max_request_body each): they keep a bounded heap
 * whatever the texts' sizes, not just a bounded number of entries.
 */
import { describe, expect, it } from 'vitest';
import type { Metrics } from '../../src/index.js';
import { FetchDocuments } from '../../plugins/grpc/fetch-document.js';
import { CacheSavings } from '../../plugins/response-cache/cache-savings.js';

/** A fetch text of about `chars` characters, distinct by `n` (a client's long string literal). */
function bigFetch(n: number, chars: number): string {
  return `query Q${n} { product(upc: "${'x'.repeat(chars)}") { name } }`;
}

/** The number of entries an LRU cache field of `owner` holds (lru-cache's `size`). */
function entries(owner: object, field: string): number {
  return (owner as unknown as Record<string, { size: number }>)[field]!.size;
}

describe('plugin caches keyed by fetch texts', () => {
  it('gRPC: parsed fetch texts of a megabyte each are not kept beyond the byte bound', () => {
    const documents = new FetchDocuments();
    for (let n = 0; n < 12; n++) expect(documents.get(bigFetch(n, 1_000_000), `Q${n}`).operation.name?.value).toBe(`Q${n}`);
    // 64 MiB at ~18 bytes a character: three of these, where a count bound alone kept all twelve.
    expect(entries(documents, 'cache')).toBeLessThanOrEqual(4);
    // Small texts are still remembered in number.
    for (let n = 0; n < 50; n++) documents.get(bigFetch(n, 10), `Q${n}`);
    expect(entries(documents, 'cache')).toBeGreaterThanOrEqual(50);
  });

  it('response cache: latency of fetch shapes a megabyte each is not kept beyond the byte bound', () => {
    const metrics = { enabled: false, counter: () => ({ inc: () => undefined }) } as unknown as Metrics;
    const savings = new CacheSavings(metrics);
    for (let n = 0; n < 40; n++) savings.measured(bigFetch(n, 1_000_000), 5);
    // 16 MiB at two bytes a character: eight of these.
    expect(entries(savings, 'latencyMs')).toBeLessThanOrEqual(8);
    for (let n = 0; n < 100; n++) savings.measured(bigFetch(n, 10), 5);
    expect(entries(savings, 'latencyMs')).toBeGreaterThanOrEqual(100);
  });
});
