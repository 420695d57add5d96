/**
 * `response_cache.invalidation.broadcast`: three replicas with the memory
 * provider share one redis-server; an invalidation sent to one reaches all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { CHANNEL, firstReview, untilAllAnswer, untilSubscribers, useBroadcastReplicas } from './broadcast-replicas.js';
import { memoryCache, sleep } from './fixtures.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const broadcast = useBroadcastReplicas(() => ({ id: 'main', urls: [redis.url] }));
const subscribers = async () => Number((await redis.cli('PUBSUB', 'NUMSUB', CHANNEL)).split('\n')[1]);

describe('invalidation broadcast between replicas', () => {
  it('removes the entry on all three replicas within a second of an invalidation sent to one', async () => {
    const all = await broadcast.threeReplicas(subscribers, 5_000);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    for (const { router } of all) expect(await firstReview(router)).toBe('Love it!');
    const sentAt = Date.now();
    // The count is what this replica removed: its own entries only.
    expect(await all[0]!.invalidate([{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'product:p1' }])).toEqual({ status: 202, body: { count: 1 } });
    await untilAllAnswer(all, 'Changed my mind.', 1_000);
    expect(Date.now() - sentAt).toBeLessThan(1_000);
  });

  it('invalidates locally while Redis is down (one warning), and a replica that was cut off clears its cache when Redis is back', async () => {
    const all = await broadcast.threeReplicas(subscribers, 5_000);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    await redis.kill();
    try {
      for (let i = 0; i < 3; i++) {
        expect(await all[0]!.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
      }
      expect(await firstReview(all[0]!.router)).toBe('Changed my mind.');
      // The others missed it (and keep answering from their cache while Redis is away).
      expect(await firstReview(all[1]!.router)).toBe('Love it!');
      const warnings = all[0]!.lines.filter((line) => line.level === 'warn' && String(line.msg).startsWith('Invalidation broadcast unavailable'));
      expect(warnings).toHaveLength(1);
    } finally {
      await redis.restart();
    }
    // Back: every replica that lost its subscription clears its memory cache.
    await untilAllAnswer(all, 'Changed my mind.', 5_000);
    for (const { lines } of all.slice(1)) expect(lines.some((line) => String(line.msg).startsWith('Invalidation broadcast back'))).toBe(true);
    // And broadcasts resume.
    await untilSubscribers(subscribers, 3, 5_000);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r10', body: 'Back again.' }]);
    await sleep(300); // the publisher reconnects on its own schedule
    expect(await all[2]!.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
    await untilAllAnswer(all, 'Back again.', 1_000);
  });

  it('stops startup when provider_id names no shared store', async () => {
    await expect(broadcast.graph.router({ cache: { ...memoryCache, invalidation: { broadcast: { enabled: true, provider_id: 'nope' } } } })).rejects.toThrow(
      /broadcast\.provider_id.*"nope" is not in storage_providers\.sharedstore/s,
    );
  });
});
