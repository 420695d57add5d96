/**
 * The invalidation behaviours every provider must show, run against memory,
 * a Redis server and a Redis Cluster by their own test files.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CoreConfigInput } from '../../../src/index.js';
import type { ResponseCacheOptions } from '../../../plugins/response-cache/index.js';
import { type CacheGraph, INVALIDATION_ENDPOINT, type InvalidatingRouter, representationsOf, startWithInvalidationEndpoint, useCacheGraph } from './fixtures.js';

/** What a provider's test file supplies. */
export interface InvalidationSuiteOptions {
  /** Cache options (storage and the like) for a fresh, empty cache. */
  readonly cache: () => ResponseCacheOptions | Promise<ResponseCacheOptions>;
  /** Core config (storage providers). */
  readonly config?: () => Omit<CoreConfigInput, 'version'>;
  /** Memory lists an entry only under its latest write's tags; Redis also under earlier ones until it expires. */
  readonly tagsFollowLatestWrite: boolean;
}

/** Starts a router of `graph` whose invalidation endpoint listens on 127.0.0.1 (a free port, read from its log line). */
export function startInvalidatingRouter(graph: CacheGraph, cache: ResponseCacheOptions, config?: Omit<CoreConfigInput, 'version'>): Promise<InvalidatingRouter> {
  return startWithInvalidationEndpoint((logger) =>
    graph.router({ cache: { ...cache, invalidation: { ...cache.invalidation, endpoint: { ...INVALIDATION_ENDPOINT, ...cache.invalidation?.endpoint } } }, config, logger }),
  );
}

export type { InvalidatingRouter } from './fixtures.js';

const WITH_REVIEWS = 'query Top($first: Int) { products(first: $first) { upc name reviews { body } } }';

export function invalidationSuite(provider: string, options: InvalidationSuiteOptions): void {
  describe(`invalidation on ${provider}`, () => {
    let graph: CacheGraph;
    let target: InvalidatingRouter;

    useCacheGraph((started) => (graph = started));

    beforeEach(async () => {
      graph.reply.products.extensions = () => ({ cacheTags: ['catalog'] });
      graph.reply.reviews.extensions = (call) => ({ entityCacheTags: representationsOf(call).map((r) => [`product:${String(r.upc)}`]) });
      target = await startInvalidatingRouter(graph, await options.cache(), options.config?.());
    });

    afterEach(async () => {
      await target.router.close();
    });

    async function warm(first = 2): Promise<void> {
      await target.router.query({ query: WITH_REVIEWS, variables: { first } });
      graph.products.reset();
      graph.reviews.reset();
    }

    it('kind subgraph removes every entry that subgraph answered and counts the keys', async () => {
      await warm();
      expect(await target.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toEqual({ status: 202, body: { count: 2 } });
      graph.data.reviews.set('p1', [{ id: 'r9', body: 'Changed my mind.' }]);
      const after = await target.router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      expect(after.body).toEqual({
        data: {
          products: [
            { upc: 'p1', name: 'Table', reviews: [{ body: 'Changed my mind.' }] },
            { upc: 'p2', name: 'Couch', reviews: [{ body: 'Too expensive.' }] },
          ],
        },
      });
      expect(graph.products.calls).toHaveLength(0);
      expect(graph.reviews.calls).toHaveLength(1);
    });

    it('kind type removes the entities of that __typename the named subgraph answered, and only those', async () => {
      await warm();
      expect(await target.invalidate([{ kind: 'type', subgraph: 'products', type: 'Product' }])).toEqual({ status: 202, body: { count: 0 } });
      expect(await target.invalidate([{ kind: 'type', subgraph: 'reviews', type: 'Product' }])).toEqual({ status: 202, body: { count: 2 } });
      await target.router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      expect(graph.products.calls).toHaveLength(0);
      expect(graph.reviews.calls).toHaveLength(1);
    });

    it('kind cache_tag removes the entries the listed subgraphs tagged, root and entity alike', async () => {
      await warm();
      expect(await target.invalidate([{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'product:p1' }])).toEqual({ status: 202, body: { count: 1 } });
      expect(await target.invalidate([{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'catalog' }])).toEqual({ status: 202, body: { count: 0 } });
      expect(await target.invalidate([{ kind: 'cache_tag', subgraphs: ['products', 'reviews'], cache_tag: 'catalog' }])).toEqual({
        status: 202,
        body: { count: 1 },
      });
      await target.router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      expect(graph.products.calls).toHaveLength(1);
      expect(representationsOf(graph.reviews.calls[0]!)).toEqual([{ __typename: 'Product', upc: 'p1' }]);
    });

    it('counts a key once when several elements name it, and 0 once it is gone', async () => {
      await warm();
      const elements = [
        { kind: 'subgraph', subgraph: 'reviews' },
        { kind: 'type', subgraph: 'reviews', type: 'Product' },
        { kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'product:p2' },
      ];
      expect(await target.invalidate(elements)).toEqual({ status: 202, body: { count: 2 } });
      expect(await target.invalidate(elements)).toEqual({ status: 202, body: { count: 0 } });
    });

    it('validates the whole array first: one bad element gives 400 and removes nothing', async () => {
      await warm();
      const answer = await target.invalidate([
        { kind: 'subgraph', subgraph: 'reviews' },
        { kind: 'type', subgraph: 'reviews' },
        { kind: 'subgraph', subgraph: 'inventory' },
      ]);
      expect(answer).toEqual({
        status: 400,
        body: {
          errors: [
            { index: 1, kind: 'type', message: '"type" is required for kind type: a __typename' },
            { index: 2, kind: 'subgraph', message: 'unknown subgraph "inventory"; the graph has products, reviews' },
          ],
        },
      });
      await target.router.query({ query: WITH_REVIEWS, variables: { first: 2 } });
      expect(graph.products.calls).toHaveLength(0);
      expect(graph.reviews.calls).toHaveLength(0);
    });

    it(
      options.tagsFollowLatestWrite
        ? 'lists an entry re-cached under other tags only under its latest tags'
        : 'keeps an entry re-cached under other tags listed under its earlier tags until it expires',
      async () => {
        await warm(1);
        // Remove the entry through another index, then let it be cached again under a new tag.
        expect(await target.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toEqual({ status: 202, body: { count: 1 } });
        graph.reply.reviews.extensions = (call) => ({ entityCacheTags: representationsOf(call).map(() => ['edition:2']) });
        await warm(1);
        expect(await target.invalidate([{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'product:p1' }])).toEqual({
          status: 202,
          body: { count: options.tagsFollowLatestWrite ? 0 : 1 },
        });
        expect(await target.invalidate([{ kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'edition:2' }])).toEqual({
          status: 202,
          body: { count: options.tagsFollowLatestWrite ? 1 : 0 },
        });
      },
    );

    it('does not count entries that expired on their own', async () => {
      graph.reply.reviews.cacheControl = 'max-age=1';
      await warm();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await target.invalidate([{ kind: 'subgraph', subgraph: 'reviews' }])).toEqual({ status: 202, body: { count: 0 } });
    });
  });
}
