import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
let people: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph({ reply: () => ({ extensions: { internal: 'never forwarded' } }) }));
  people = await startSubgraph(peopleSubgraph());
  router = await startTestRouter({ subgraphs: [library, people] });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([library?.close(), people?.close()]);
});

describe('executing operations across subgraphs', () => {
  it('keeps aliases, variables, fragments and __typename as the client wrote them', async () => {
    const response = await router.query({
      query: /* GraphQL */ `
        query Shelf($id: ID!) {
          first: book(id: $id) { ...Info author { writer: name __typename } }
          __typename
        }
        fragment Info on Book { heading: title id }
      `,
      variables: { id: 'b1' },
    });
    expect(response.body).toEqual({
      data: {
        first: { heading: 'Dune', id: 'b1', author: { writer: 'Frank Herbert', __typename: 'Author' } },
        __typename: 'Query',
      },
    });
  });

  it('resolves union members with type conditions and jumps for the member that needs it', async () => {
    const response = await router.query(`{ search(term: "e") { __typename ... on Book { title } ... on Author { name } } }`);
    expect(response.body).toEqual({
      data: {
        search: [
          { __typename: 'Book', title: 'Dune' },
          { __typename: 'Book', title: 'Emma' },
          { __typename: 'Author', name: 'Frank Herbert' },
          { __typename: 'Author', name: 'Jane Austen' },
        ],
      },
    });
  });

  it('returns partial data with the subgraph error at its path', async () => {
    const response = await router.query('{ failing books { id } }');
    expect(response.body.data).toEqual({ failing: null, books: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }] });
    // subgraph_error_propagation defaults: message, path and extensions.code only (no serviceName, no locations).
    expect(response.body.errors).toEqual([{ message: 'the library is closed', path: ['failing'] }]);
  });

  it('rewrites entity error paths into the client response and propagates nulls to the nearest nullable parent', async () => {
    const response = await router.query('{ books { title ratings } }');
    expect(response.body.data).toBeNull();
    expect(response.body.errors?.map((e) => e.path)).toEqual([['books', 2, 'ratings']]);
  });

  it('keeps the error path of an entity field in a nested list', async () => {
    const response = await router.query('{ books { author { name secret } } }');
    expect(response.body.data).toEqual({
      books: [{ author: { name: 'Frank Herbert', secret: null } }, { author: { name: 'Jane Austen', secret: null } }, { author: { name: 'Philip K. Dick', secret: null } }],
    });
    expect(response.body.errors?.map((e) => e.path)).toEqual([
      ['books', 0, 'author', 'secret'],
      ['books', 1, 'author', 'secret'],
      ['books', 2, 'author', 'secret'],
    ]);
  });

  it('reports a non-nullable root field that came back null and nulls the data', async () => {
    const response = await router.query('{ mustNotFail }');
    expect(response.body.data).toBeNull();
    expect(response.body.errors).toEqual([expect.objectContaining({ path: ['mustNotFail'] })]);
  });

  it('never forwards subgraph response extensions', async () => {
    const response = await router.query('{ books { id } }');
    expect(response.body).toEqual({ data: { books: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }] } });
  });

  it('runs mutations and returns their results', async () => {
    const response = await router.query('mutation { addBook(title: "Solaris") { title author { name } } }');
    expect(response.body).toEqual({ data: { addBook: { title: 'Solaris', author: { name: 'Frank Herbert' } } } });
  });

  it('answers introspection from the client-facing schema', async () => {
    const response = await router.query('{ __type(name: "Book") { fields { name } } }');
    expect(response.body.data).toEqual({
      __type: { fields: [{ name: 'id' }, { name: 'title' }, { name: 'author' }, { name: 'ratings' }] },
    });
  });

  it('adds the query plan to extensions when asked with X-Switchyard-Include-Query-Plan', async () => {
    const response = await router.query({ query: '{ book(id: "b2") { title author { name } } }', headers: { 'x-switchyard-include-query-plan': 'true' } });
    expect(response.body.data).toEqual({ book: { title: 'Emma', author: { name: 'Jane Austen' } } });
    const plan = response.body.extensions?.queryPlan as { kind: string; node: { kind: string } };
    expect(plan.kind).toBe('QueryPlan');
    expect(plan.node.kind).toBe('Sequence');
  });

  it('refuses variables of the wrong type before fetching anything', async () => {
    library.reset();
    const response = await router.query({ query: 'query($id: ID!) { book(id: $id) { id } }', variables: { id: { nested: true } } });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(library.calls).toHaveLength(0);
  });

  it('uses the default value of an omitted variable', async () => {
    const response = await router.query({ query: 'query($times: Int = 3) { echo(text: "ab", times: $times) }' });
    expect(response.body).toEqual({ data: { echo: 'ababab' } });
  });
});

describe('hostile response keys', () => {
  it('answers a field aliased __proto__ under that key without touching the prototype', async () => {
    const response = await router.query('{ __proto__: book(id: "b1") { constructor: title __proto__: __typename } }');
    expect(response.status).toBe(200);
    expect(JSON.stringify(response.body)).toBe('{"data":{"__proto__":{"constructor":"Dune","__proto__":"Book"}}}');
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });
});
