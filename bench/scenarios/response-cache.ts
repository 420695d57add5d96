/**
 * The response cache's all-hit path (issue 5): the benchmark operation with
 * the memory response cache on vs off. Every subgraph answer carries
 * `Cache-Control: public, max-age=60`, for both contenders, so the only
 * difference is the cache; the first request fills it and every later one
 * (the fetch count "alone", the warm-up, the load) is answered from it.
 *
 * Two references are measured beside them, not judged: the cache off with
 * in-flight sharing off too (where concurrent identical requests do not
 * already share their fetches and the work derived from them), and the
 * static ceiling (bare node:http writing the expected bytes), the least a
 * request for this 89 KB answer can cost on this machine.
 *
 * The shared store (issue 26), on a local redis-server
 * (response-cache-redis.ts): the memory tier in front of Redis, all hits,
 * judged against the memory provider (at least 0.9x its req/s), with Redis
 * alone as the reference; and a Redis that stops answering at the first
 * cache read, judged once the circuit breaker is open: p99 at most twice
 * the cache-off p99. (Its breaker `timeout` is 200ms so the few requests
 * that wait for it before it opens fall in the warm-up.)
 *
 * After the rounds, `servers/cache-memory.ts` measures the memory target:
 * the heap growth of a router whose memory cache is filled with 10,000
 * entities.
 */
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { runToEnd } from '../harness/processes.js';
import type { AfterRoundsContext, Contender, LaunchContext, Scenario, TargetCheck } from '../harness/scenario.js';
import { medianEquals, ratioTarget, referenceRatio } from '../harness/targets.js';
import type { CacheMemoryResult } from '../servers/cache-memory.js';
import { ceiling, switchyard, type SwitchyardOptions } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';
import { benchRedisPort, benchRedisUrl, startFreezingProxy, type FreezingProxy } from './response-cache-redis.js';

const OFF = 'switchyard-cache-off';
const ON = 'switchyard-cache-on';
const OFF_NOSHARING = 'switchyard-cache-off-nosharing';
const CEILING = 'ceiling';
const REDIS = 'switchyard-cache-redis';
const TIERED = 'switchyard-cache-tiered';
const FROZEN = 'switchyard-cache-redis-frozen';
const ENTITIES = 10_000;
const MIB = 1024 * 1024;
const HEAP_LIMIT_MIB = 50;

async function cacheMemoryTarget(context: AfterRoundsContext): Promise<TargetCheck> {
  const name = `heap of ${ENTITIES.toLocaleString('en')} cached entities (memory provider) < ${HEAP_LIMIT_MIB} MiB`;
  mkdirSync(context.workDir, { recursive: true });
  let result: CacheMemoryResult;
  try {
    const output = await runToEnd({
      command: process.execPath,
      args: ['--expose-gc', context.programs.servers['cache-memory']],
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', BENCH_CACHE_ENTITIES: String(ENTITIES) },
      cwd: context.workDir,
      cores: context.contenderCores,
      logFile: join(context.workDir, 'cache-memory.log'),
      timeoutMs: 120_000,
    });
    result = JSON.parse(output.trim().split('\n').at(-1) ?? '') as CacheMemoryResult;
  } catch (error) {
    return { name, met: false, shown: `measurement failed: ${(error as Error).message.split('\n')[0]}` };
  }
  const heapMiB = result.heapGrowthBytes / MIB;
  const allHits = result.entityFetchesOnRepeat === 0 && result.sameAnswer;
  const detail =
    `${heapMiB.toFixed(1)} MiB heap growth (${(result.heapGrowthBytes / result.entities).toFixed(0)} bytes/entity), ` +
    `${(result.externalGrowthBytes / MIB).toFixed(1)} MiB outside the heap; repeat: ${result.entityFetchesOnRepeat} entity fetches` +
    (result.sameAnswer ? ', same answer' : ', DIFFERENT answer');
  return { name, value: heapMiB, met: allHits && heapMiB < HEAP_LIMIT_MIB, shown: allHits ? detail : `not all cached: ${detail}` };
}

/** Logged once the cache is on; without it the run would measure nothing. */
const cacheEnabled = (log: string): string | undefined => (log.includes('Response cache enabled') ? undefined : 'the router did not log "Response cache enabled"');

/** A Switchyard contender whose config names a Redis known only at launch. */
function withRedis(options: SwitchyardOptions, config: (redisUrl: string) => Record<string, unknown>, redisUrl: () => Promise<string>): Contender {
  return {
    ...switchyard(options),
    async launch(context: LaunchContext) {
      return switchyard({ ...options, config: config(await redisUrl()) }).launch(context);
    },
  };
}

const sharedStoreConfig = (redisUrl: string, extra: Record<string, unknown> = {}) => ({
  storage_providers: { sharedstore: [{ id: 'bench', urls: [redisUrl] }] },
  response_cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'bench' }, ...extra },
});

/** Starts of the Redis contenders so far (their key prefixes). */
let starts = 0;

/** The frozen contender's proxy of its current start (a fresh one per start: each freezes once). */
let freezingProxy: FreezingProxy | undefined;

async function frozenRedisUrl(): Promise<string> {
  await freezingProxy?.close();
  freezingProxy = await startFreezingProxy(await benchRedisPort());
  return freezingProxy.url;
}

export const responseCacheScenario: Scenario = {
  name: 'response-cache',
  description:
    'Switchyard with the memory response cache on vs off (all hits), benchmark operation, with the cache off without sharing and the static ceiling for reference; the memory tier in front of Redis (all hits) vs the memory provider, Redis alone for reference; Redis frozen with the breaker open vs cache off (p99); then the heap of 10,000 cached entities',
  request: GRAPHQL_POST,
  subgraphs: { cacheControl: 'public, max-age=60' },
  ratioLabel: 'req/s / cache off',
  contenders: [
    switchyard({ id: OFF, label: 'Switchyard, cache off', baseline: OFF }),
    switchyard({
      id: ON,
      label: 'Switchyard, memory cache',
      baseline: OFF,
      config: { response_cache: { enabled: true, storage: { provider: 'memory' } } },
      // Without this check the cache could be silently off and the run would measure nothing.
      checkLog: cacheEnabled,
    }),
    switchyard({ id: OFF_NOSHARING, label: 'Switchyard, cache off, in-flight sharing off', sharing: 'off', baseline: OFF }),
    ceiling({ baseline: OFF }),
    // A key prefix of its own per start: each start fills its entries afresh, as the memory provider does (entries
    // another start wrote would expire mid-run), and the tier keeps no entry a router without it wrote.
    withRedis(
      { id: REDIS, label: 'Switchyard, Redis cache (no memory tier)', baseline: OFF, checkLog: cacheEnabled },
      (url) => sharedStoreConfig(url, { key_prefix: `bench_redis_${++starts}:` }),
      benchRedisUrl,
    ),
    withRedis(
      { id: TIERED, label: 'Switchyard, memory tier in front of Redis', baseline: OFF, checkLog: cacheEnabled },
      (url) => sharedStoreConfig(url, { key_prefix: `bench_tiered_${++starts}:`, memory_tier: { enabled: true } }),
      benchRedisUrl,
    ),
    withRedis(
      {
        id: FROZEN,
        label: 'Switchyard, Redis cache, Redis frozen (breaker open)',
        baseline: OFF,
        checkLog: (log) =>
          cacheEnabled(log) ??
          (log.includes('Response cache degraded') ? undefined : 'no "Response cache degraded" warning after the first request: the Redis proxy did not freeze'),
      },
      (url) => sharedStoreConfig(url, { circuit_breaker: { timeout: '200ms' } }),
      frozenRedisUrl,
    ),
  ],
  expected: benchExpected,
  targets: (summaries) => [
    ratioTarget(summaries, ON, OFF, 'rps', { atLeast: 3 }),
    medianEquals(summaries, ON, 'fetchesAlone', 0, 'subgraph requests of one request alone'),
    medianEquals(summaries, ON, 'subgraphRequestsPerRequest', 0, 'subgraph requests per request under load'),
    referenceRatio(summaries, ON, OFF_NOSHARING, 'rps', 'req/s'),
    referenceRatio(summaries, ON, CEILING, 'cpuMsPerRequest', 'CPU ms per request'),
    ratioTarget(summaries, TIERED, ON, 'rps', { atLeast: 0.9 }),
    medianEquals(summaries, TIERED, 'subgraphRequestsPerRequest', 0, 'subgraph requests per request under load (memory tier)'),
    referenceRatio(summaries, TIERED, ON, 'cpuMsPerRequest', 'CPU ms per request (steadier than req/s on a busy machine)'),
    referenceRatio(summaries, REDIS, ON, 'rps', 'req/s'),
    ratioTarget(summaries, FROZEN, OFF, 'latencyP99Ms', { atMost: 2 }),
  ],
  afterRounds: async (context) => [await cacheMemoryTarget(context)],
};
