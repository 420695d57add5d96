/**
 * Entries in the shared store that this router cannot use (another value
 * format, as another router version writes during a rolling deploy, or
 * another shape, as something else writing under the key prefix does) are
 * read as misses: the subgraph answers, the right answer is served and
 * written over the entry; each is counted, and a warning is logged at most
 * every 10 s.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STORED_VALUE_FORMAT, UNREADABLE_ENTRY_MESSAGE } from '../../../plugins/response-cache/index.js';
import type { TestRouter } from '../../../src/testing/index.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { capturingLogger, startCacheGraph, type CacheGraph } from './fixtures.js';

let graph: CacheGraph;
let redis: RedisServer;
let router: TestRouter;
let logs: ReturnType<typeof capturingLogger>;

beforeAll(async () => {
  [graph, redis] = await Promise.all([startCacheGraph(), startRedis()]);
  logs = capturingLogger('info');
  router = await graph.router({
    cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } },
    config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] }, metrics: { enabled: true, listen_addr: '127.0.0.1:0' } },
    logger: logs.logger,
  });
  await router.router.listen('127.0.0.1:0');
});

afterAll(async () => {
  await router?.close();
  await Promise.all([graph?.close(), redis?.stop()]);
});

beforeEach(async () => {
  graph.reset();
  await redis.cli('FLUSHALL');
});

const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc reviews { body } } }';
const ANSWER = {
  data: {
    products: [
      { upc: 'p1', reviews: [{ body: 'Love it!' }] },
      { upc: 'p2', reviews: [{ body: 'Too expensive.' }] },
    ],
  },
};
const V = STORED_VALUE_FORMAT;
const later = () => Date.now() + 60_000;

/** Fills the cache; resolves with the root entry's key and the two entity entries' keys (p1 first). */
async function cached(): Promise<{ root: string; p1: string; p2: string }> {
  expect((await router.query({ query: WITH_REVIEWS, variables: { first: 2 } })).body).toEqual(ANSWER);
  const root = await redis.cli('KEYS', 'router_response_cache:v1:root:*');
  const entities = (await redis.cli('KEYS', 'router_response_cache:v1:entity:*')).split('\n').sort();
  expect(root.split('\n')).toHaveLength(1);
  expect(entities).toHaveLength(2);
  const [p1, p2] = entities.sort((a, b) => Number(a.includes('"p2"')) - Number(b.includes('"p2"')));
  return { root, p1: p1!, p2: p2! };
}

async function storeErrors(): Promise<Record<string, number>> {
  const text = await (await fetch(router.router.metricsUrl!)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^switchyard_response_cache_store_errors_total\{operation="([^"]+)"\} (\d+)$/gm)) counts[match[1]!] = Number(match[2]);
  return counts;
}

/** A row as the store holds it: keyv's envelope around the value. */
const row = (value: unknown, expires: unknown = later()) => JSON.stringify({ value, expires });

interface Case {
  readonly name: string;
  readonly entry: 'root' | 'p1';
  readonly text: () => string;
  readonly kind: 'format' | 'shape';
}

const cases: Case[] = [
  { name: 'a root entry whose data is an array', entry: 'root', text: () => row({ v: V, d: [{ upc: 'p9' }] }), kind: 'shape' },
  { name: 'a root entry whose data is a string', entry: 'root', text: () => row({ v: V, d: 'products' }), kind: 'shape' },
  { name: 'a root entry whose data is null', entry: 'root', text: () => row({ v: V, d: null }), kind: 'shape' },
  { name: 'a root entry whose expiry is a string', entry: 'root', text: () => row({ v: V, d: { products: [{ upc: 'p9' }] } }, 'soon'), kind: 'shape' },
  { name: 'a root entry without an expiry', entry: 'root', text: () => JSON.stringify({ value: { v: V, d: { products: [{ upc: 'p9' }] } } }), kind: 'shape' },
  { name: 'a root entry whose public flag is not 1', entry: 'root', text: () => row({ v: V, d: { products: [{ upc: 'p9' }] }, p: 'yes' }), kind: 'shape' },
  { name: 'a root entry whose index ids are a string', entry: 'root', text: () => row({ v: V, d: { products: [{ upc: 'p9' }] }, i: 'tag:products:x' }), kind: 'shape' },
  { name: 'a root entry whose format version is a string', entry: 'root', text: () => row({ v: String(V), d: { products: [{ upc: 'p9' }] } }), kind: 'shape' },
  { name: 'a root entry that is not JSON', entry: 'root', text: () => '{"value": {"v": 2, "d": {', kind: 'shape' },
  { name: 'a root entry that is a JSON array', entry: 'root', text: () => JSON.stringify([{ value: { v: V, d: {} }, expires: later() }]), kind: 'shape' },
  { name: 'a root entry of format 1 (no version: written before formats were numbered)', entry: 'root', text: () => row({ d: { products: [{ upc: 'p9' }] } }), kind: 'format' },
  { name: 'a root entry of a later format', entry: 'root', text: () => row({ v: V + 1, d: { products: [{ upc: 'p9' }] } }), kind: 'format' },
  { name: 'an entity entry whose data is an array', entry: 'p1', text: () => row({ v: V, d: [{ reviews: [{ body: 'Forged' }] }] }), kind: 'shape' },
  { name: 'an entity entry whose data is a number', entry: 'p1', text: () => row({ v: V, d: 7 }), kind: 'shape' },
  { name: 'an entity entry whose index ids are not strings', entry: 'p1', text: () => row({ v: V, d: { reviews: [{ body: 'Forged' }] }, i: [1, 2] }), kind: 'shape' },
  { name: 'an entity entry of format 1', entry: 'p1', text: () => row({ d: { reviews: [{ body: 'Forged' }] } }), kind: 'format' },
];

describe('entries the router cannot use', () => {
  for (const { name, entry, text, kind } of cases) {
    it(`reads ${name} as a miss, answers from the subgraph and writes the entry over`, async () => {
      const keys = await cached();
      const key = keys[entry];
      const subgraph = entry === 'root' ? graph.products : graph.reviews;
      const errorsBefore = await storeErrors();
      await redis.cli('SET', key, text(), 'PX', '60000');
      const callsBefore = subgraph.calls.length;

      expect((await router.query({ query: WITH_REVIEWS, variables: { first: 2 } })).body).toEqual(ANSWER);
      expect(subgraph.calls).toHaveLength(callsBefore + 1);
      // Only the bad entity is fetched again: the other is still a hit.
      if (entry === 'p1') expect(subgraph.calls.at(-1)!.variables.representations).toEqual([{ __typename: 'Product', upc: 'p1' }]);
      const operation = kind === 'format' ? 'read_other_format' : 'read_malformed';
      expect((await storeErrors())[operation] ?? 0).toBe((errorsBefore[operation] ?? 0) + 1);
      // Written over: a value of this format, served from the cache from now on.
      expect(JSON.parse(await redis.cli('GET', key)).value.v).toBe(V);
      expect((await router.query({ query: WITH_REVIEWS, variables: { first: 2 } })).body).toEqual(ANSWER);
      expect(subgraph.calls).toHaveLength(callsBefore + 1);
    });
  }

  it('warns at most once every 10 s, naming the key and what is wrong, never the value', async () => {
    // A router of its own: the warnings of the cases above do not count here, whatever ran before.
    const own = capturingLogger('info');
    const second = await graph.router({
      cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } },
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
      logger: own.logger,
    });
    try {
      const warnings = () => own.lines.filter((line) => line.msg === UNREADABLE_ENTRY_MESSAGE);
      for (let round = 0; round < 3; round++) {
        const { root } = await cached();
        await redis.cli('SET', root, row({ v: V, d: 'x', p9: 'secret' }), 'PX', '60000');
        expect((await second.query({ query: WITH_REVIEWS, variables: { first: 2 } })).body).toEqual(ANSWER);
      }
      // Three unreadable entries within seconds: one warning.
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0]).toMatchObject({ level: 'warn', plugin: 'response-cache', kind: 'shape', reason: 'data is not an object', entries_not_logged: 0 });
      expect(warnings()[0]!.key).toMatch(/^router_response_cache:v1:root:products:/);
      expect(JSON.stringify(warnings()[0])).not.toContain('secret');
    } finally {
      await second.close();
    }
  });
});
