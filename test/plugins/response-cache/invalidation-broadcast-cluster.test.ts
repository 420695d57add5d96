/**
 * `response_cache.invalidation.broadcast` on a three-master Redis Cluster
 * (sharded pub/sub): three replicas with the memory provider; an
 * invalidation sent to one reaches all, the master carrying the channel can
 * restart mid-run, the channel's slot can move, and a cluster unreachable at
 * startup leaves invalidations local.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster, type RedisServer } from '../../support/redis.js';
import { CHANNEL, firstReview, tagReviewsByProduct, untilAllAnswer, untilSubscribers, useBroadcastReplicas } from './broadcast-replicas.js';
import { freePort, sleep } from './fixtures.js';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

const broadcast = useBroadcastReplicas(() => ({ id: 'cluster', cluster_enabled: true, urls: cluster.urls }));

/** The master that owns the channel's slot (from each node's own line of `CLUSTER NODES`). */
async function channelOwner(): Promise<RedisServer> {
  const slot = Number(await cluster.nodes[0]!.cli('CLUSTER', 'KEYSLOT', CHANNEL));
  for (const node of cluster.nodes) {
    const myself = (await node.cli('CLUSTER', 'NODES')).split('\n').find((line) => line.includes('myself'));
    const ranges = myself?.split(' ').slice(8) ?? [];
    for (const range of ranges) {
      const [from, to = from] = range.split('-').map(Number);
      if (from !== undefined && from <= slot && slot <= to!) return node;
    }
  }
  throw new Error(`no master owns slot ${slot}`);
}

/** Sharded subscribers of the channel, on its owner. */
async function subscribers(owner: RedisServer): Promise<number> {
  return Number((await owner.cli('PUBSUB', 'SHARDNUMSUB', CHANNEL)).split('\n')[1]);
}

describe('invalidation broadcast on a Redis Cluster (sharded pub/sub)', () => {
  it('removes the entry on all three replicas within a second of an invalidation sent to one, and ignores foreign messages', async () => {
    const owner = await channelOwner();
    const all = await broadcast.threeReplicas(() => subscribers(owner), 10_000);
    // Anything else published on the channel is not a router's message: ignored, nothing breaks.
    for (const junk of ['not json', 'null', '{"from":"x","indexes":5}', '{"from":"x","indexes":[1,null]}']) await owner.cli('SPUBLISH', CHANNEL, junk);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    for (const { router } of all) expect(await firstReview(router)).toBe('Love it!');
    const sentAt = Date.now();
    expect(await all[1]!.invalidate([{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'product:p1' }])).toEqual({ status: 202, body: { count: 1 } });
    await untilAllAnswer(all, 'Changed my mind.', 1_000);
    expect(Date.now() - sentAt).toBeLessThan(1_000);
  }, 30_000);

  it('survives a restart of the master carrying the channel: local invalidation meanwhile, the cut-off replicas clear their caches, broadcasts resume', async () => {
    const owner = await channelOwner();
    const all = await broadcast.threeReplicas(() => subscribers(owner), 10_000);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    await owner.kill();
    try {
      expect(await all[0]!.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
      expect(await firstReview(all[0]!.router)).toBe('Changed my mind.');
      // The others missed it, and keep answering (from their cache) without a crash.
      expect(await firstReview(all[1]!.router)).toBe('Love it!');
      expect(all[0]!.lines.some((line) => line.level === 'warn' && String(line.msg).startsWith('Invalidation broadcast unavailable'))).toBe(true);
      // Down past the 2 s after which the replicas ask the other masters who owns the slot (still the dead one), and past cluster-node-timeout.
      await sleep(2_500);
      expect(await firstReview(all[2]!.router)).toBe('Love it!');
    } finally {
      await owner.restart();
    }
    await untilAllAnswer(all, 'Changed my mind.', 10_000);
    for (const { lines } of all.slice(1)) expect(lines.some((line) => String(line.msg).startsWith('Invalidation broadcast back'))).toBe(true);
    await untilSubscribers(() => subscribers(owner), 3, 10_000);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r10', body: 'Back again.' }]);
    await sleep(300); // the publishers reconnect on their own schedule
    expect(await all[2]!.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
    await untilAllAnswer(all, 'Back again.', 1_000);
  }, 60_000);

  it('starts with no cluster node reachable, invalidates locally and warns', async () => {
    const closed = `redis://127.0.0.1:${await freePort()}`;
    const { router, lines, invalidate } = await broadcast.replica({ id: 'cluster', cluster_enabled: true, urls: [closed] });
    tagReviewsByProduct(broadcast.graph);
    expect(await firstReview(router)).toBe('Love it!');
    broadcast.graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    expect(await invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
    expect(await firstReview(router)).toBe('Changed my mind.');
    const warnings = lines.filter((line) => line.level === 'warn' && String(line.msg).startsWith('Invalidation broadcast unavailable'));
    expect(warnings).toHaveLength(1);
  });

  it('follows the channel when its slot moves to another master', async () => {
    const owner = await channelOwner();
    const all = await broadcast.threeReplicas(() => subscribers(owner), 10_000);
    const target = cluster.nodes.find((node) => node !== owner)!;
    const slot = await owner.cli('CLUSTER', 'KEYSLOT', CHANNEL);
    const [ownerId, targetId] = await Promise.all([owner.cli('CLUSTER', 'MYID'), target.cli('CLUSTER', 'MYID')]);
    // The slot holds no keys, so it moves without MIGRATE; the old owner then drops its sharded subscribers.
    await target.cli('CLUSTER', 'SETSLOT', slot, 'IMPORTING', ownerId);
    await owner.cli('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId);
    for (const node of [target, owner, ...cluster.nodes.filter((node) => node !== owner && node !== target)]) await node.cli('CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
    expect(await channelOwner()).toBe(target);
    await untilSubscribers(() => subscribers(target), 3, 10_000);
    expect(await subscribers(owner)).toBe(0);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
    // The replicas that resubscribed have cleared their caches (they may have missed a message): fill them again.
    for (const { router } of all) await firstReview(router);
    broadcast.graph.data.reviews.set('p1', [{ id: 'r10', body: 'Moved along.' }]);
    await sleep(300); // the publishers move on their own schedule
    expect(await all[0]!.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toMatchObject({ status: 202 });
    await untilAllAnswer(all, 'Moved along.', 1_000);
  }, 60_000);
});
