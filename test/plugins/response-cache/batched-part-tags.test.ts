/**
 * Cache tags of a batched entity call (aliased `_entities` parts): the
 * subgraph declares one tag list per entity of every part, parts in order.
 * A part whose answer has the wrong length is not stored, but the parts
 * after it must still get their own entities' tags, so that invalidating a
 * tag drops exactly the entry it names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter, type SubgraphCall, type SubgraphReply, type TestSubgraph } from '../../../src/testing/index.js';
import { INVALIDATION_ENDPOINT, type InvalidatingRouter, memoryCache, startWithInvalidationEndpoint } from './fixtures.js';

const LISTS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { named: [Product] priced: [Product] }
  type Product @key(fields: "id") { id: ID! }
`;
const DETAILS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Product @key(fields: "id") { id: ID! name: String price: Int }
`;
/** Two entity fetches to `details` in one wave with different selections: one call of two parts. */
const QUERY = '{ named { id name } priced { id price } }';

type Representation = { id: string };

/** The batched call's answer: the `{ name }` part one entity short, the `{ price }` part right; a tag list per entity answered. */
function shortFirstPart(call: SubgraphCall): SubgraphReply | undefined {
  if (!call.query.includes('_1:')) return undefined;
  const [named, priced] = [call.variables.r0, call.variables.r1] as Representation[][];
  const first = named!.slice(0, -1).map((r) => ({ __typename: 'Product', name: `name ${r.id}` }));
  const second = priced!.map((r) => ({ __typename: 'Product', price: Number(r.id) }));
  const entityCacheTags = [...first.map((_, i) => [`named:${named![i]!.id}`]), ...priced!.map((r) => [`priced:${r.id}`])];
  return { headers: { 'cache-control': 'max-age=60' }, body: JSON.stringify({ data: { _0: first, _1: second }, extensions: { entityCacheTags } }) };
}

let subgraphs: TestSubgraph[];
let cached: InvalidatingRouter;

beforeAll(async () => {
  subgraphs = await Promise.all([
    startSubgraph({ name: 'lists', typeDefs: LISTS, resolvers: { Query: { named: () => [{ id: '1' }, { id: '2' }], priced: () => [{ id: '3' }, { id: '4' }] } } }),
    startSubgraph({ name: 'details', typeDefs: DETAILS, reply: shortFirstPart }),
  ]);
  cached = await startWithInvalidationEndpoint((logger) =>
    startTestRouter({
      subgraphs,
      logger,
      plugins: [useCacheTags(), useResponseCache({ ...memoryCache, invalidation: { endpoint: INVALIDATION_ENDPOINT } })],
    }),
  );
});

afterAll(async () => {
  await cached?.router.close();
  await Promise.all(subgraphs?.map((s) => s.close()) ?? []);
});

async function invalidateTag(tag: string): Promise<unknown> {
  const answer = await cached.invalidate([{ kind: 'cache_tag', subgraphs: ['details'], cache_tag: tag }]);
  expect(answer.status).toBe(202);
  return answer.body;
}

describe('cache tags of a batched call with a part of the wrong length', () => {
  it('stores the right part under its own entities’ tags', async () => {
    const details = subgraphs[1]!;
    const first = await cached.router.query(QUERY);
    expect(first.body.data).toMatchObject({
      priced: [
        { id: '3', price: 3 },
        { id: '4', price: 4 },
      ],
    });
    expect(first.body.errors?.length).toBeGreaterThan(0);
    expect(details.calls.map((call) => call.query.includes('_1:'))).toEqual([true]);

    // The short part stored nothing; product 4's { price } entry is tagged priced:4 and nothing else.
    expect(await invalidateTag('named:2')).toEqual({ count: 0 });
    expect(await invalidateTag('priced:4')).toEqual({ count: 1 });
    expect(await invalidateTag('priced:4')).toEqual({ count: 0 });
    expect(await invalidateTag('priced:3')).toEqual({ count: 1 });
  });
});
