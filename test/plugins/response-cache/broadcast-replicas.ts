/**
 * Replicas for the `response_cache.invalidation.broadcast` tests: routers of
 * one cache graph, each with the memory provider and the invalidation
 * endpoint, that broadcast invalidations through one shared store (a Redis
 * server or a Redis Cluster, given by the test file).
 */
import { afterEach, expect } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import {
  type CacheGraph,
  INVALIDATION_ENDPOINT,
  type InvalidatingRouter,
  memoryCache,
  representationsOf,
  sleep,
  startWithInvalidationEndpoint,
  useCacheGraph,
} from './fixtures.js';

export const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc name reviews { body } } }';
/** The pub/sub channel the replicas share. */
export const CHANNEL = 'router_response_cache:invalidations';

/** The shared store the replicas broadcast through: its `storage_providers.sharedstore` entry. */
export interface BroadcastStore {
  readonly id: string;
  readonly urls: readonly string[];
  readonly cluster_enabled?: boolean;
}

export interface BroadcastReplicas {
  /** The cache graph, started before the file's tests (read it inside a test or hook). */
  readonly graph: CacheGraph;
  /** Starts one replica broadcasting through `store` (default: the file's store); it is closed after the test. */
  replica(store?: BroadcastStore): Promise<InvalidatingRouter>;
  /**
   * Starts three replicas, waits until `subscribers()` counts three on the
   * channel, tags reviews by product and fills each replica's cache.
   */
  threeReplicas(subscribers: () => Promise<number>, timeoutMs: number): Promise<InvalidatingRouter[]>;
}

/**
 * Starts the cache graph for the calling file and closes the replicas after
 * each test. `store` is read when a replica starts (after the file's
 * beforeAll has started the store).
 */
export function useBroadcastReplicas(store: () => BroadcastStore): BroadcastReplicas {
  let graph: CacheGraph | undefined;
  useCacheGraph((started) => (graph = started));
  let replicas: InvalidatingRouter[] = [];
  afterEach(async () => {
    await Promise.all(replicas.map((replica) => replica.router.close()));
    replicas = [];
  });

  async function replica(through = store()): Promise<InvalidatingRouter> {
    const { id, ...sharedstore } = through;
    const started = await startWithInvalidationEndpoint((logger) =>
      broadcasting.graph.router({
        cache: { ...memoryCache, invalidation: { endpoint: INVALIDATION_ENDPOINT, broadcast: { enabled: true, provider_id: id } } },
        config: { storage_providers: { sharedstore: [{ id, ...sharedstore, urls: [...sharedstore.urls] }] } },
        logger,
      }),
    );
    replicas.push(started);
    return started;
  }

  const broadcasting: BroadcastReplicas = {
    get graph() {
      if (!graph) throw new Error('the cache graph starts in beforeAll: read it inside a test or hook');
      return graph;
    },
    replica,
    async threeReplicas(subscribers, timeoutMs) {
      const started = await Promise.all([replica(), replica(), replica()]);
      // Each subscribes in the background.
      await untilSubscribers(subscribers, 3, timeoutMs);
      tagReviewsByProduct(broadcasting.graph);
      for (const { router } of started) await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      return started;
    },
  };
  return broadcasting;
}

/** Has reviews tag each product's entities `product:<upc>`. */
export function tagReviewsByProduct(graph: CacheGraph): void {
  graph.reply.reviews.extensions = (call) => ({ entityCacheTags: representationsOf(call).map((r) => [`product:${String(r.upc)}`]) });
}

/** Polls `subscribers()` until it counts `count`, then asserts it does. */
export async function untilSubscribers(subscribers: () => Promise<number>, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && (await subscribers()) !== count) await sleep(20);
  expect(await subscribers()).toBe(count);
}

/** The body of p1's first review, as `router` answers it now. */
export async function firstReview(router: TestRouter): Promise<string> {
  const answer = await router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
  if (!(answer.body as { data?: unknown }).data) throw new Error(JSON.stringify(answer.body));
  const products = (answer.body as { data: { products: Array<{ reviews: Array<{ body: string }> }> } }).data.products;
  return products[0]!.reviews[0]!.body;
}

/** Polls until every replica answers `body` for p1's first review; resolves with how long that took. */
export async function untilAllAnswer(all: readonly InvalidatingRouter[], body: string, timeoutMs: number): Promise<number> {
  const start = Date.now();
  for (const { router } of all) {
    while ((await firstReview(router)) !== body) {
      if (Date.now() - start > timeoutMs) throw new Error(`a replica still answers stale data after ${timeoutMs}ms`);
      await sleep(20);
    }
  }
  return Date.now() - start;
}
