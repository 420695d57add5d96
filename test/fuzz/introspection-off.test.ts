import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';

let library: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  router = await startTestRouter({ subgraphs: [library], config: { introspection: { enabled: false }, playground: { enabled: false } } });
});

afterAll(async () => {
  await router?.close();
  await library?.close();
});

/** Ways to ask for the schema: under aliases, fragments, inline fragments, directives, beside ordinary fields. */
const schemaField = fc.constantFrom('__schema { types { name } }', '__schema { queryType { name } }', '__type(name: "Book") { fields { name } }', '__type(name: "Query") { name }');
const wrapped = fc
  .tuple(
    schemaField,
    fc.constantFrom('', 'a: ', '__schema2: '),
    fc.constantFrom('', ' @skip(if: false)', ' @include(if: true)'),
    fc.constantFrom('plain', 'inline', 'fragment'),
    fc.boolean(),
  )
  .map(([field, alias, directive, shape, withOthers]) => {
    const selection = `${alias}${field.replace(' {', `${directive} {`)}`;
    const others = withOthers ? ' books { id } __typename' : '';
    if (shape === 'inline') return `{ ... on Query { ${selection} }${others} }`;
    if (shape === 'fragment') return `query Q { ...F${others} } fragment F on Query { ${selection} }`;
    return `{ ${selection}${others} }`;
  });

describe('introspection.enabled: false', () => {
  it('refuses every request that reaches for the schema, however it is written, without running any of it', async () => {
    await fc.assert(
      fc.asyncProperty(wrapped, fc.constantFrom('POST', 'GET'), async (query, method) => {
        const response = await router.query({ query, method, headers: { accept: 'application/graphql-response+json' } });
        expect(response.status, query).toBe(400);
        expect(response.body.data).toBeUndefined();
        expect(response.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(JSON.stringify(response.body)).not.toContain('"Book"');
      }),
      { numRuns: 60 },
    );
    expect(library.calls).toHaveLength(0);
  });

  it('still answers __typename and ordinary queries, and serves no playground', async () => {
    expect((await router.query('{ __typename books { __typename id } }')).body).toEqual({
      data: {
        __typename: 'Query',
        books: [
          { __typename: 'Book', id: 'b1' },
          { __typename: 'Book', id: 'b2' },
          { __typename: 'Book', id: 'b3' },
        ],
      },
    });
    const page = await router.fetch('/', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(404);
    await page.text();
  });
});
