import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../kernel/library-subgraphs.js';
import { expectPrototypeUntouched, POLLUTING_OBJECT } from './prototype.js';

let library: TestSubgraph;
let people: TestSubgraph;
let router: TestRouter;
/** What the people subgraph answers next: a raw body and status, or its real answer when undefined. */
let next: { body: string; status: number } | undefined;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  people = await startSubgraph(peopleSubgraph({ reply: () => next ?? {} }));
  router = await startTestRouter({
    subgraphs: [library, people],
    config: { traffic_shaping: { subgraphs: { people: { retry: { enabled: false } } } } },
  });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([library?.close(), people?.close()]);
});

const QUERY = '{ book(id: "b1") { title author { name } ratings } }';
const CODES = new Set(['SUBGRAPH_REQUEST_FAILED', 'SUBGRAPH_INVALID_RESPONSE']);

/** `_entities` answers of every shape: right, wrong types, wrong lengths, nulls, extra keys, errors beside data. */
const entity = fc.oneof(
  fc.constant({ __typename: 'Author', name: 'Frank Herbert' }),
  fc.constant({ __typename: 'Book', ratings: [5, 4] }),
  fc.record({ __typename: fc.constantFrom('Author', 'Book', 'Nope', ''), name: fc.jsonValue({ maxDepth: 1 }), ratings: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constant(JSON.parse(POLLUTING_OBJECT) as unknown),
);
const graphqlBody = fc
  .record(
    {
      data: fc.oneof(fc.record({ _entities: fc.oneof(fc.array(entity, { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })) }), fc.jsonValue({ maxDepth: 2 })),
      errors: fc.oneof(
        fc.array(fc.record({ message: fc.jsonValue({ maxDepth: 1 }), path: fc.jsonValue({ maxDepth: 1 }), extensions: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }), {
          maxLength: 2,
        }),
        fc.jsonValue({ maxDepth: 1 }),
      ),
      extensions: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  )
  .map((value) => JSON.stringify(value));
const body = fc.oneof(
  graphqlBody,
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

describe('fuzzing subgraph answers', () => {
  it("keeps the healthy subgraph's data whatever the other one answers, with a documented code when it cannot be used", async () => {
    const seen: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom(200, 200, 200, 400, 500, 503), async (text, status) => {
        next = { body: text, status };
        const response = await router.query(QUERY);
        expect(response.status, text.slice(0, 200)).toBe(200);
        const data = response.body.data as { book: { title: string } | null } | null;
        // The root fetch went to the healthy library subgraph: its data survives unless null propagation from a non-null field removes it.
        if (data?.book) expect(data.book.title).toBe('Dune');
        for (const error of response.body.errors ?? []) {
          expect(typeof error.message).toBe('string');
          const code = error.extensions?.code;
          seen[String(code)] = (seen[String(code)] ?? 0) + 1;
          // Errors the subgraph reported itself are passed on without a code of the router's.
          if (code !== undefined) expect(CODES, `${String(code)} for ${text.slice(0, 200)}`).toContain(code);
        }
        expectPrototypeUntouched();
      }),
      { numRuns: 250 },
    );
    next = undefined;
    expect(seen.SUBGRAPH_INVALID_RESPONSE).toBeGreaterThan(0);
    expect(seen.SUBGRAPH_REQUEST_FAILED).toBeGreaterThan(0);
    expect((await router.query(QUERY)).body).toEqual({ data: { book: { title: 'Dune', author: { name: 'Frank Herbert' }, ratings: expect.any(Array) } } });
  });
});
