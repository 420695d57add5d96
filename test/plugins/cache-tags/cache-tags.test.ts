import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin, z } from '../../../src/index.js';
import { startTestRouter, type TestRouter } from '../../../src/testing/index.js';
import { CACHE_TAGS, useCacheTags, type FetchCacheTags } from '../../../plugins/cache-tags/index.js';
import { type CacheGraph, capturingLogger, representationsOf, useCacheGraph } from '../response-cache/fixtures.js';

let graph: CacheGraph;
let router: TestRouter;
let seen: Array<{ subgraph: string; tags: FetchCacheTags | undefined }>;
let perRequest: Array<Record<string, string[]>>;
let logs: ReturnType<typeof capturingLogger>;

/** A plugin of our own that reads what cache-tags recorded, as any third party could. */
const useTagObserver = definePlugin({
  name: 'tag-observer',
  options: z.strictObject({}),
  dependsOn: ['cache-tags'],
  setup: () => ({
    hooks: {
      onFetch: () =>
        function observe(after) {
          seen.push({ subgraph: after.input.subgraph, tags: after.state.get(CACHE_TAGS)?.of(after.input) });
        },
      onRespond: (event) => {
        const all = event.state.get(CACHE_TAGS)?.bySubgraph() ?? new Map<string, ReadonlySet<string>>();
        perRequest.push(Object.fromEntries([...all].map(([subgraph, tags]) => [subgraph, [...tags].sort()])));
      },
    },
  }),
});

useCacheGraph((started) => (graph = started));

beforeEach(async () => {
  seen = [];
  perRequest = [];
  logs = capturingLogger();
  router = await startTestRouter({ subgraphs: [graph.products, graph.reviews], plugins: [useCacheTags(), useTagObserver()], logger: logs.logger });
});

afterEach(async () => {
  await router.close();
});

const WITH_REVIEWS = '{ products(first: 2) { upc reviews { body } } }';

describe('cache tags from subgraph extensions', () => {
  it('reads cacheTags of a root fetch and entityCacheTags of an entity fetch, without the response cache', async () => {
    graph.reply.products.extensions = () => ({ cacheTags: ['catalog', 'top-products'] });
    graph.reply.reviews.extensions = (call) => ({ entityCacheTags: representationsOf(call).map((r) => [`product:${String(r.upc)}`, 'reviews']) });
    const response = await router.query(WITH_REVIEWS);
    expect(response.body).toEqual({
      data: {
        products: [
          { upc: 'p1', reviews: [{ body: 'Love it!' }] },
          { upc: 'p2', reviews: [{ body: 'Too expensive.' }] },
        ],
      },
    });
    expect(seen).toEqual([
      { subgraph: 'products', tags: { kind: 'root', tags: ['catalog', 'top-products'] } },
      {
        subgraph: 'reviews',
        tags: {
          kind: 'entity',
          entities: [
            ['product:p1', 'reviews'],
            ['product:p2', 'reviews'],
          ],
        },
      },
    ]);
    expect(perRequest).toEqual([{ products: ['catalog', 'top-products'], reviews: ['product:p1', 'product:p2', 'reviews'] }]);
  });

  it('never forwards the tag extensions to clients', async () => {
    graph.reply.products.extensions = () => ({ cacheTags: ['catalog'] });
    const response = await router.query('{ products(first: 1) { upc } }');
    expect(response.body).toEqual({ data: { products: [{ upc: 'p1' }] } });
  });

  it('drops every tag of a response whose entityCacheTags length differs from the entity count', async () => {
    graph.reply.reviews.extensions = () => ({ entityCacheTags: [['product:p1']] });
    await router.query(WITH_REVIEWS);
    expect(seen.find((s) => s.subgraph === 'reviews')).toEqual({ subgraph: 'reviews', tags: undefined });
    expect(logs.lines).toContainEqual(
      expect.objectContaining({ level: 'debug', plugin: 'cache-tags', msg: 'Cache tags dropped', subgraph: 'reviews', reason: '"entityCacheTags" has 1 lists for 2 entities' }),
    );
  });

  it('drops malformed declarations: tags that are not strings, or not lists', async () => {
    graph.reply.products.extensions = () => ({ cacheTags: 'catalog' });
    graph.reply.reviews.extensions = () => ({ entityCacheTags: [['product:p1'], [42]] });
    await router.query(WITH_REVIEWS);
    expect(seen).toEqual([
      { subgraph: 'products', tags: undefined },
      { subgraph: 'reviews', tags: undefined },
    ]);
    expect(logs.lines.filter((line) => line.msg === 'Cache tags dropped').map((line) => line.reason)).toEqual([
      '"cacheTags" must be a list of strings',
      '"entityCacheTags" must be a list of lists of strings',
    ]);
  });

  it('ignores the extension meant for the other fetch kind', async () => {
    graph.reply.products.extensions = () => ({ entityCacheTags: [['x']] });
    graph.reply.reviews.extensions = () => ({ cacheTags: ['y'] });
    await router.query(WITH_REVIEWS);
    expect(seen).toEqual([
      { subgraph: 'products', tags: undefined },
      { subgraph: 'reviews', tags: undefined },
    ]);
    expect(perRequest).toEqual([{}]);
  });
});
