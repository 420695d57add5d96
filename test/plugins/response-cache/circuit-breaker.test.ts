/**
 * `response_cache.circuit_breaker`: a real redis-server frozen with
 * `DEBUG SLEEP` opens the breaker within `failure_threshold` store
 * operations; requests then answer from the subgraphs about as fast as with
 * the cache off, and the breaker closes again once Redis answers. A frozen
 * Redis (SIGSTOP) gets the invalidation endpoint a 503 within the timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { DEGRADED_MESSAGE } from '../../../plugins/response-cache/index.js';
import { BreakerCacheStore, BreakerOpenError } from '../../../plugins/response-cache/store/breaker-store.js';
import type { CacheStore } from '../../../plugins/response-cache/store/cache-store.js';
import { createLogger } from '../../../src/index.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { DeadlineCacheStore } from '../../../plugins/response-cache/store/deadline-store.js';
import { capturingLogger, sleep, startCacheGraph, type CacheGraph } from './fixtures.js';
import { startInvalidatingRouter } from './invalidation-suite.js';

const QUERY = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';
const ANSWER = {
  data: {
    products: [
      { upc: 'p1', reviews: [{ body: 'Love it!' }] },
      { upc: 'p2', reviews: [{ body: 'Too expensive.' }] },
    ],
  },
};
const OPEN = 'Response cache circuit breaker open: no shared store calls during the cool-down';
const CLOSED = 'Response cache circuit breaker closed: the shared store answers again';

function p99(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

async function timed(router: TestRouter): Promise<number> {
  const started = performance.now();
  const response = await router.query({ query: QUERY, variables: { first: 2 } });
  const took = performance.now() - started;
  expect(response.status).toBe(200);
  expect(response.body).toEqual(ANSWER);
  return took;
}

let graph: CacheGraph;
let redis: RedisServer;

beforeAll(async () => {
  [graph, redis] = await Promise.all([startCacheGraph(), startRedis({ args: ['--enable-debug-command', 'local'] })]);
});

afterAll(async () => {
  await Promise.all([graph?.close(), redis?.stop()]);
});

describe('the circuit breaker on a frozen Redis', () => {
  let cached: TestRouter;
  let uncached: TestRouter;
  const logs = capturingLogger('info');

  beforeAll(async () => {
    const config = { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } };
    cached = await graph.router({
      cache: {
        enabled: true,
        storage: { provider: 'sharedstore', provider_id: 'main' },
        circuit_breaker: { failure_threshold: 3, cool_down: '1s', timeout: '100ms' },
      },
      config: { ...config, metrics: { enabled: true, listen_addr: '127.0.0.1:0' } },
      logger: logs.logger,
    });
    await cached.router.listen('127.0.0.1:0');
    uncached = await graph.router({ cache: { enabled: false } });
  });

  afterAll(async () => {
    await Promise.all([cached?.close(), uncached?.close()]);
  });

  /** `switchyard_response_cache_breaker_state` as the metrics endpoint shows it. */
  async function breakerGauge(): Promise<string | undefined> {
    const text = await (await fetch(cached.router.metricsUrl!)).text();
    return text.split('\n').find((line) => line.startsWith('switchyard_response_cache_breaker_state '));
  }

  it('opens within failure_threshold operations, keeps requests fast, and closes once Redis is back', async () => {
    expect(await breakerGauge()).toBe('switchyard_response_cache_breaker_state 0');
    await timed(cached);
    await timed(cached);
    expect(graph.products.calls).toHaveLength(1);

    for (let i = 0; i < 5; i++) await timed(uncached);
    const cacheOff: number[] = [];
    for (let i = 0; i < 30; i++) cacheOff.push(await timed(uncached));

    graph.reset();
    const frozen = redis.cli('DEBUG', 'SLEEP', '3');
    await sleep(100);
    const frozenAt = Date.now();
    // Each request makes two store reads (root and entities): threshold 3 is reached by the second request.
    let requestsUntilOpen = 0;
    while (!logs.lines.some((line) => line.msg === OPEN) && requestsUntilOpen < 10) {
      await timed(cached);
      requestsUntilOpen++;
    }
    expect(requestsUntilOpen).toBeGreaterThanOrEqual(1);
    expect(requestsUntilOpen).toBeLessThanOrEqual(2);
    expect(logs.lines.find((line) => line.msg === OPEN)).toMatchObject({ level: 'warn', plugin: 'response-cache', failures: 3 });
    expect(await breakerGauge()).toBe('switchyard_response_cache_breaker_state 1');

    const open: number[] = [];
    for (let i = 0; i < 30; i++) open.push(await timed(cached));
    // Open: no store call at all, so as fast as the cache off (generously: twice its p99, plus scheduling noise).
    expect(p99(open)).toBeLessThanOrEqual(2 * p99(cacheOff) + 25);
    const degraded = logs.lines.filter((line) => line.msg === DEGRADED_MESSAGE);
    expect(degraded.length).toBeGreaterThanOrEqual(1);
    expect(degraded.length).toBeLessThanOrEqual(Math.floor((Date.now() - frozenAt) / 1000) + 1);

    await frozen;
    // Past the cool-down: the next request's first read is the probe, which succeeds and closes the breaker.
    let closed = false;
    for (let attempt = 0; attempt < 30 && !closed; attempt++) {
      await sleep(200);
      await timed(cached);
      closed = logs.lines.some((line) => line.msg === CLOSED);
    }
    expect(closed).toBe(true);
    expect(await breakerGauge()).toBe('switchyard_response_cache_breaker_state 0');
    graph.reset();
    await timed(cached);
    await timed(cached);
    expect(graph.products.calls.length).toBeLessThanOrEqual(1);
  }, 30_000);
});

describe('invalidations on a frozen Redis', () => {
  it('are answered 503 within circuit_breaker.timeout while the breaker is closed, and count as its failures', async () => {
    graph.reset();
    const target = await startInvalidatingRouter(
      graph,
      {
        enabled: true,
        key_prefix: 'frozen-invalidation:',
        storage: { provider: 'sharedstore', provider_id: 'main' },
        circuit_breaker: { failure_threshold: 2, cool_down: '10s', timeout: '100ms' },
      },
      { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
    );
    const element = [{ kind: 'subgraph', subgraph: 'products' }];
    try {
      await target.router.query({ query: QUERY, variables: { first: 2 } });
      expect(await target.invalidate(element)).toEqual({ status: 202, body: { count: 1 } });
      const pid = Number(/process_id:(\d+)/.exec(await redis.cli('INFO', 'server'))![1]);
      // SIGSTOP freezes at once (no reply, the connection stays open); thawed in any case, so a hang fails on the assertions.
      process.kill(pid, 'SIGSTOP');
      const thaw = setTimeout(() => process.kill(pid, 'SIGCONT'), 3000);
      try {
        for (let attempt = 1; attempt <= 2; attempt++) {
          const started = performance.now();
          const answer = await target.invalidate(element);
          expect(performance.now() - started).toBeLessThan(1000);
          expect(answer).toEqual({
            status: 503,
            body: { errors: [{ message: 'The cache store is unreachable; some entries may not have been removed. Send the request again.' }] },
          });
        }
        // Two timed-out invalidations, no other store operation: they opened the breaker (threshold 2).
        expect(target.lines.find((line) => line.msg === OPEN)).toMatchObject({ level: 'warn', failures: 2 });
      } finally {
        clearTimeout(thaw);
        process.kill(pid, 'SIGCONT');
      }
    } finally {
      await target.router.close();
    }
  });
});

/** A store whose invalidation answers in `steps` round trips of `stepMs` each (0 steps: never answers). */
function steppedStore(steps: number, stepMs: number): CacheStore {
  return {
    provider: 'sharedstore',
    getMany: async (keys) => keys.map(() => undefined),
    epoch: async () => 0,
    write: async () => [],
    async invalidate(_indexes, progress) {
      if (steps === 0) return new Promise<string[]>(() => undefined);
      for (let step = 0; step < steps; step++) {
        await sleep(stepMs);
        progress?.();
      }
      return ['removed'];
    },
    close: async () => undefined,
  };
}

describe('the invalidation deadline', () => {
  const log = createLogger({ level: 'silent' });

  it('gives up on a store that stops answering, and lets one that keeps answering run past the timeout', async () => {
    const silent = new BreakerCacheStore(steppedStore(0, 0), { failureThreshold: 1, coolDownMs: 1000, timeoutMs: 40 }, log);
    await expect(silent.invalidate(['subgraph:products'])).rejects.toThrow('shared store invalidation took longer than 40ms to answer');
    expect(silent.state).toBe('open');

    // Six answers 20ms apart: 120ms in all, three times the timeout, each answer within it.
    const busy = new BreakerCacheStore(steppedStore(6, 20), { failureThreshold: 1, coolDownMs: 1000, timeoutMs: 60 }, log);
    await expect(busy.invalidate(['subgraph:products'])).resolves.toEqual(['removed']);
    expect(busy.state).toBe('closed');
  });

  it('holds without the breaker too', async () => {
    await expect(new DeadlineCacheStore(steppedStore(0, 0), 40).invalidate(['subgraph:products'])).rejects.toThrow('took longer than 40ms');
    await expect(new DeadlineCacheStore(steppedStore(6, 20), 60).invalidate(['subgraph:products'])).resolves.toEqual(['removed']);
  });
});

describe('BreakerCacheStore', () => {
  const log = createLogger({ level: 'silent' });

  function failingStore(): CacheStore & { calls: number; fail: boolean } {
    const store = {
      provider: 'sharedstore' as const,
      calls: 0,
      fail: true,
      async getMany(keys: readonly string[]) {
        store.calls++;
        if (store.fail) throw new Error('down');
        return keys.map(() => undefined);
      },
      epoch: async () => 0,
      write: async () => [],
      invalidate: async () => [],
      close: async () => undefined,
    };
    return store;
  }

  it('makes no call while open, lets one probe through after the cool-down, and reopens when it fails', async () => {
    const inner = failingStore();
    const breaker = new BreakerCacheStore(inner, { failureThreshold: 2, coolDownMs: 150, timeoutMs: 50 }, log);
    await expect(breaker.getMany(['a'])).rejects.toThrow('down');
    expect(breaker.state).toBe('closed');
    await expect(breaker.getMany(['a'])).rejects.toThrow('down');
    expect(breaker.state).toBe('open');
    for (let i = 0; i < 10; i++) await expect(breaker.getMany(['a'])).rejects.toBeInstanceOf(BreakerOpenError);
    expect(inner.calls).toBe(2);

    await sleep(160);
    expect(breaker.state).toBe('half_open');
    await expect(breaker.getMany(['a'])).rejects.toThrow('down');
    expect(inner.calls).toBe(3);
    expect(breaker.state).toBe('open');

    await sleep(160);
    inner.fail = false;
    // Only one probe at a time: a second call while it is out fails at once.
    const probe = breaker.getMany(['a']);
    await expect(breaker.getMany(['b'])).rejects.toBeInstanceOf(BreakerOpenError);
    await expect(probe).resolves.toEqual([undefined]);
    expect(breaker.state).toBe('closed');
    await breaker.getMany(['a']);
    expect(inner.calls).toBe(5);
  });

  it('reports each state change: open, half-open when the cool-down ends, closed after a good probe', async () => {
    const inner = failingStore();
    const states: string[] = [];
    const breaker = new BreakerCacheStore(inner, { failureThreshold: 1, coolDownMs: 100, timeoutMs: 50 }, log, (state) => states.push(state));
    await expect(breaker.getMany(['a'])).rejects.toThrow('down');
    expect(states).toEqual(['closed', 'open']);
    // No request needed: the end of the cool-down is reported by itself.
    await sleep(150);
    expect(states).toEqual(['closed', 'open', 'half_open']);
    inner.fail = false;
    await breaker.getMany(['a']);
    expect(states).toEqual(['closed', 'open', 'half_open', 'half_open', 'closed']);
    await breaker.close();
  });

  it('counts an operation slower than the timeout as a failure', async () => {
    const slow: CacheStore = {
      provider: 'sharedstore',
      getMany: () => new Promise(() => undefined),
      epoch: async () => 0,
      write: async () => [],
      invalidate: async () => [],
      close: async () => undefined,
    };
    const breaker = new BreakerCacheStore(slow, { failureThreshold: 1, coolDownMs: 1000, timeoutMs: 30 }, log);
    const started = Date.now();
    await expect(breaker.getMany(['a'])).rejects.toThrow('took longer than 30ms');
    expect(Date.now() - started).toBeLessThan(500);
    expect(breaker.state).toBe('open');
  });
});
