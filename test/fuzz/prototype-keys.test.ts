import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../kernel/library-subgraphs.js';
import { expectPrototypeUntouched, pollutingKeys, POLLUTING_OBJECT } from './prototype.js';

let library: TestSubgraph;
let people: TestSubgraph;
let router: TestRouter;
/** When set, the people subgraph answers this raw body instead. */
let peopleBody: string | undefined;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  people = await startSubgraph(peopleSubgraph({ reply: () => (peopleBody === undefined ? {} : { body: peopleBody }) }));
  router = await startTestRouter({ subgraphs: [library, people] });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([library?.close(), people?.close()]);
});

const DUNE = { data: { book: { title: 'Dune', author: { name: 'Frank Herbert' } } } };
const QUERY = 'query Book($id: ID!) { book(id: $id) { title author { name } } }';

/** Posts a raw JSON text to /graphql and parses the answer. */
async function post(body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await router.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('JSON keys that reach for Object.prototype', () => {
  it('ignores them in the request body, variables and extensions', async () => {
    await fc.assert(
      fc.asyncProperty(pollutingKeys, fc.constantFrom('top', 'variables', 'extensions', 'nested'), async (key, where) => {
        const polluting = `${JSON.stringify(key)}: ${POLLUTING_OBJECT}`;
        const variables = where === 'variables' ? `{"id": "b1", ${polluting}}` : where === 'nested' ? `{"id": "b1", "extra": {${polluting}}}` : '{"id": "b1"}';
        const extensions = where === 'extensions' ? `{${polluting}}` : '{}';
        const top = where === 'top' ? `, ${polluting}` : '';
        const answer = await post(`{"query": ${JSON.stringify(QUERY)}, "variables": ${variables}, "extensions": ${extensions}${top}}`);
        if (where === 'top') {
          // GraphQL over HTTP: a body key it does not know is a client error.
          expect(answer).toEqual({
            status: 400,
            body: { errors: [{ message: `Unexpected parameter ${JSON.stringify(key)} in the request body.`, extensions: { code: 'BAD_REQUEST' } }] },
          });
        } else {
          expect(answer).toEqual({ status: 200, body: DUNE });
        }
        expectPrototypeUntouched();
      }),
      { numRuns: 40 },
    );
  });

  it('answers an alias named like a prototype key as its own field', async () => {
    for (const alias of ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'prototype']) {
      const response = await router.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ ${alias}: book(id: "b1") { ${alias}: title } }` }),
      });
      expect(response.status).toBe(200);
      // Compared as text: parsing it back would turn "__proto__" into a prototype again.
      expect(await response.text()).toBe(`{"data":{"${alias}":{"${alias}":"Dune"}}}`);
      expectPrototypeUntouched();
    }
  });

  it('answers such an alias on a field another subgraph filled in, leaf or list', async () => {
    for (const alias of ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf']) {
      const response = await router.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ book(id: "b1") { title ${alias}: ratings author { ${alias}: name } } }` }),
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(`{"data":{"book":{"title":"Dune","${alias}":[5,4],"author":{"${alias}":"Frank Herbert"}}}}`);
      expectPrototypeUntouched();
    }
  });

  it('forwards a variable named $__proto__, sent or defaulted, and plans on its value', async () => {
    const echo = await post(JSON.stringify({ query: 'query($__proto__: String!) { echo(text: $__proto__) }', variables: JSON.parse('{"__proto__": "hello"}') }));
    expect(echo).toEqual({ status: 200, body: { data: { echo: 'hello' } } });
    const defaulted = await post(JSON.stringify({ query: 'query($__proto__: Int = 2) { echo(text: "ab", times: $__proto__) }' }));
    expect(defaulted).toEqual({ status: 200, body: { data: { echo: 'abab' } } });
    // The plan cache keys on the condition's value: true then false must not share a plan.
    const query = 'query($__proto__: Boolean!) { book(id: "b1") { title author @include(if: $__proto__) { name } } }';
    const shown = await post(`{"query": ${JSON.stringify(query)}, "variables": {"__proto__": true}}`);
    expect(shown.body).toEqual({ data: { book: { title: 'Dune', author: { name: 'Frank Herbert' } } } });
    const hidden = await post(`{"query": ${JSON.stringify(query)}, "variables": {"__proto__": false}}`);
    expect(hidden.body).toEqual({ data: { book: { title: 'Dune' } } });
    expectPrototypeUntouched();
  });

  it('does not let a subgraph answer with such keys pollute anything, in data, entities or extensions', async () => {
    const bodies = [
      `{"data": {"_entities": [{"__typename": "Author", "name": "Frank Herbert", "__proto__": ${POLLUTING_OBJECT}}]}}`,
      `{"data": {"_entities": [{"__proto__": ${POLLUTING_OBJECT}, "constructor": {"prototype": {"polluted": "yes"}}}]}}`,
      `{"data": {"__proto__": ${POLLUTING_OBJECT}, "_entities": [{"__typename": "Author", "name": "Frank Herbert"}]}}`,
      `{"data": {"_entities": [{"__typename": "Author", "name": "Frank Herbert"}]}, "extensions": ${POLLUTING_OBJECT}, "errors": [{"message": "x", "extensions": ${POLLUTING_OBJECT}}]}`,
      POLLUTING_OBJECT,
    ];
    try {
      for (const body of bodies) {
        peopleBody = body;
        const answer = await post(JSON.stringify({ query: QUERY, variables: { id: 'b1' } }));
        expect(answer.status).toBe(200);
        expect((answer.body.data as { book: { title: string } }).book.title).toBe('Dune');
        expectPrototypeUntouched();
      }
    } finally {
      peopleBody = undefined;
    }
    expect((await post(JSON.stringify({ query: QUERY, variables: { id: 'b1' } }))).body).toEqual(DUNE);
  });
});
