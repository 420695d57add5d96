import { afterEach, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter } from '../../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../library-subgraphs.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function setup(config?: Parameters<typeof startTestRouter>[0]['config'], delayMs?: number) {
  const library = await startSubgraph(librarySubgraph({ delayMs }));
  const people = await startSubgraph(peopleSubgraph());
  const router = await startTestRouter({ subgraphs: [library, people], config });
  open.push(router, library, people);
  return { library, people, router };
}

describe('subgraph fetching', () => {
  it('shares one subgraph call among identical concurrent queries', async () => {
    const { router, library } = await setup({}, 150);
    const results = await Promise.all([1, 2, 3].map(() => router.query('{ books { title } }')));
    for (const result of results) expect(result.body.data).toEqual({ books: [{ title: 'Dune' }, { title: 'Emma' }, { title: 'Ubik' }] });
    expect(library.calls).toHaveLength(1);
  });

  it('gives every request sharing answers its full response, and new data once the answers change', async () => {
    const library = await startSubgraph(librarySubgraph({ delayMs: 100 }));
    const people = await startSubgraph(peopleSubgraph({ delayMs: 100 }));
    const router = await startTestRouter({ subgraphs: [library, people] });
    open.push(router, library, people);
    const query = '{ books { title author { name } } }';
    const before = {
      books: [
        { title: 'Dune', author: { name: 'Frank Herbert' } },
        { title: 'Emma', author: { name: 'Jane Austen' } },
        { title: 'Ubik', author: { name: 'Philip K. Dick' } },
      ],
    };
    // Same answers, different operations: each is shaped by its own selections.
    const [first, second, third, other] = await Promise.all([router.query(query), router.query(query), router.query(query), router.query('{ books { author { name } title } }')]);
    for (const result of [first, second, third]) expect(result.body).toEqual({ data: before });
    expect(other.body).toEqual({ data: { books: before.books.map(({ title, author }) => ({ author, title })) } });
    expect(library.calls).toHaveLength(2);
    expect(people.calls).toHaveLength(1);

    await router.query('mutation { addBook(title: "Solaris") { id } }');
    const after = await router.query(query);
    expect(after.body.data?.books).toHaveLength(4);
    expect((after.body.data!.books as Array<{ title: string }>)[3]!.title).toBe('Solaris');
  });

  it('sends each query when single flight is switched off', async () => {
    const { router, library } = await setup({ engine: { enable_single_flight: false } }, 100);
    await Promise.all([1, 2, 3].map(() => router.query('{ books { title } }')));
    expect(library.calls).toHaveLength(3);
  });

  it('never shares mutations', async () => {
    const { router, library } = await setup({}, 100);
    await Promise.all([1, 2].map(() => router.query('mutation { addBook(title: "Twin") { id } }')));
    expect(library.calls).toHaveLength(2);
  });

  it('sends one _entities call per fetch with every representation, deduplicated', async () => {
    const { router, people } = await setup();
    const response = await router.query('{ books { author { name } } again: books { author { name } } }');
    expect(response.body.errors).toBeUndefined();
    expect(people.calls).toHaveLength(1);
    expect(people.calls[0]!.variables.representations).toEqual([
      { __typename: 'Author', id: 'a1' },
      { __typename: 'Author', id: 'a2' },
      { __typename: 'Author', id: 'a3' },
    ]);
  });

  it('sends entity fetches to one subgraph in one wave as one call, with multi-fetch on or off', async () => {
    // Authors selected two ways: one batched call of two aliased `_entities` parts in the plan.
    const query = '{ books { ratings author { name } } other: books { author { n: name } } }';
    const off = await setup();
    expect((await off.router.query(query)).body.errors?.[0]?.path).toEqual(['books', 2, 'ratings']);
    expect(off.people.calls).toHaveLength(1);
    expect(off.people.calls[0]!.query).toContain('_0: _entities(representations: $r0)');
    expect(off.people.calls[0]!.query).toContain('_1: _entities(representations: $r1)');

    const on = await setup({ engine: { enable_multi_fetch: true } });
    const merged = await on.router.query(query);
    expect(merged.body.errors?.map((e) => e.path)).toEqual([['books', 2, 'ratings']]);
    expect(on.people.calls).toHaveLength(1);
    expect(on.people.calls[0]!.query).toContain('_1: _entities(representations: $r1)');
  });

  it('propagates, sets, renames and removes headers by the configured rules', async () => {
    const { router, library, people } = await setup({
      headers: {
        all: {
          request: [
            { op: 'propagate', named: 'Authorization' },
            { op: 'propagate', matching: '^x-tenant-' },
            { op: 'propagate', named: 'x-missing', default: 'fallback' },
            { op: 'set', name: 'x-router', value: 'switchyard' },
          ],
        },
        subgraphs: {
          people: {
            request: [
              { op: 'remove', named: 'authorization' },
              { op: 'propagate', named: 'x-lang', rename: 'accept-language' },
            ],
          },
        },
      },
    });
    await router.query({
      query: '{ book(id: "b1") { author { name } } }',
      headers: { authorization: 'Bearer abc', 'x-tenant-id': 't1', 'x-lang': 'fr', 'x-other': 'dropped' },
    });
    const toLibrary = library.calls[0]!.headers;
    expect(toLibrary).toMatchObject({ authorization: 'Bearer abc', 'x-tenant-id': 't1', 'x-missing': 'fallback', 'x-router': 'switchyard' });
    expect(toLibrary['x-other']).toBeUndefined();
    const toPeople = people.calls[0]!.headers;
    expect(toPeople.authorization).toBeUndefined();
    expect(toPeople['accept-language']).toBe('fr');
  });

  it('forwards no client headers without rules', async () => {
    const { router, library } = await setup();
    await router.query({ query: '{ books { id } }', headers: { authorization: 'Bearer abc' } });
    expect(library.calls[0]!.headers.authorization).toBeUndefined();
  });
});
