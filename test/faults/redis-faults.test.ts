import { describe, expect, it, vi } from 'vitest';
import type { TestRouter } from '../../src/testing/index.js';
import type { CacheGraph, capturingLogger } from '../plugins/response-cache/fixtures.js';
import { useRedisBackedRouter } from '../plugins/response-cache/redis-backed-router.js';
import type { RedisServer } from '../support/redis.js';
import { eventually, problems, sleep, startLoad } from './load-loop.js';

vi.setConfig({ testTimeout: 30_000 });

let graph: CacheGraph;
let redis: RedisServer;
let router: TestRouter;
let logs: ReturnType<typeof capturingLogger>;

useRedisBackedRouter((setup) => ({ graph, redis, router, logs } = setup));

const QUERY = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';
const REVIEWS: Record<string, string> = { p1: 'Love it!', p2: 'Too expensive.', p3: 'Could be better.' };

/** The right answer for `first` products: a wrong one would show a reply meant for another request. */
function expected(first: number) {
  return { data: { products: ['p1', 'p2', 'p3'].slice(0, first).map((upc) => ({ upc, reviews: [{ body: REVIEWS[upc] }] })) } };
}

/** One request with `first` cycling through 1..3; a problem description unless the answer is exactly right. */
async function send(i: number): Promise<string | undefined> {
  const first = (i % 3) + 1;
  const response = await router.query({ query: QUERY, variables: { first } });
  const body = JSON.stringify(response.body);
  if (response.status !== 200 || body !== JSON.stringify(expected(first))) return `${response.status} ${body.slice(0, 300)}`;
  return undefined;
}

/** Whether the cache answers again: no request reaches `products` for `windowMs` while load runs. */
async function servedFromCache(windowMs = 300): Promise<boolean> {
  const before = graph.products.calls.length;
  await sleep(windowMs);
  return graph.products.calls.length === before;
}

/** `process_id` of the running redis-server, from INFO. */
async function redisPid(): Promise<number> {
  const info = await redis.cli('INFO', 'server');
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no process_id in INFO: ${info.slice(0, 200)}`);
  return pid;
}

describe('the response cache on Redis, under load', () => {
  it('keeps answering from the subgraphs while Redis is killed, and caches again by itself once it is restarted', async () => {
    const load = startLoad(send);
    await eventually(() => servedFromCache(), 'the cache to warm up');

    await redis.kill();
    const downAt = Date.now();
    await sleep(1000);
    await redis.restart();
    const upAt = Date.now();
    await eventually(() => servedFromCache(), 'caching to resume after the restart', 15_000);
    const samples = await load.stop();

    expect(problems(samples)).toEqual([]);
    const duringOutage = samples.filter((sample) => sample.at >= downAt && sample.at < upAt);
    expect(duringOutage.length).toBeGreaterThan(20);
    // No offline queue: commands fail at once while the store is gone, so no request waits for it.
    expect(Math.max(...duringOutage.map((sample) => sample.ms))).toBeLessThan(1500);
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 'warn', plugin: 'response-cache', msg: 'Response cache degraded, serving from the subgraph instead' }));
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 'info', plugin: 'response-cache', msg: 'Response cache store reachable again' }));
    expect(Number(await redis.cli('DBSIZE'))).toBeGreaterThan(0);
  });

  it('bounds every request by the command timeout while Redis is frozen (SIGSTOP), skips it meanwhile, and answers right once it thaws', async () => {
    await eventually(async () => (await send(0)) === undefined && (await servedFromCache(100)), 'the cache to answer');
    const pid = await redisPid();
    const load = startLoad(send);
    await sleep(200);
    process.kill(pid, 'SIGSTOP');
    const frozenAt = Date.now();
    try {
      await sleep(4000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const thawedAt = Date.now();
    await sleep(300);
    // Replies to commands that timed out arrive late: none may answer a later command.
    await eventually(() => servedFromCache(), 'caching to resume after the freeze', 15_000);
    await sleep(500);
    const samples = await load.stop();

    expect(problems(samples)).toEqual([]);
    const frozen = samples.filter((sample) => sample.at >= frozenAt && sample.at < thawedAt);
    // A store operation gives up after 1s; this query has two cached fetches in sequence (products, then reviews).
    expect(Math.max(...frozen.map((sample) => sample.ms))).toBeLessThan(2600);
    // After one gives up, the store is skipped for a second: most requests do not wait at all.
    const latencies = frozen.map((sample) => sample.ms).sort((a, b) => a - b);
    expect(latencies[Math.floor(latencies.length / 2)]).toBeLessThan(100);
    expect(frozen.length).toBeGreaterThan(100);
  });

  it('treats entries it cannot read (not JSON, other shapes, other types) as misses and replaces them', async () => {
    await eventually(async () => (await send(0)) === undefined && (await servedFromCache(100)), 'the cache to answer');
    const keys = (await redis.cli('KEYS', 'router_response_cache:v1:*')).split('\n').filter((key) => !key.includes(':index:') && !key.includes('{guard}'));
    expect(keys.length).toBeGreaterThan(0);
    const garbage = ['not json', '{"value": ', '{"value": {"d": "text"}, "expires": "soon"}', '{"value": {"d": {"products": 1}}}', '[]', 'null', '\u0000\u00ff'];
    for (const [i, key] of keys.entries()) {
      if (i % 3 === 2) {
        await redis.cli('DEL', key);
        await redis.cli('LPUSH', key, 'a list, not a string');
      } else {
        await redis.cli('SET', key, garbage[i % garbage.length]!, 'PX', '60000');
      }
    }
    graph.reset();
    const load = startLoad(send, 4);
    try {
      await sleep(500);
      await eventually(() => servedFromCache(), 'caching to resume over the garbage', 10_000);
    } finally {
      await load.stop();
    }
    const samples = load.samples;
    expect(problems(samples)).toEqual([]);
    expect(samples.length).toBeGreaterThan(20);
  });
});
