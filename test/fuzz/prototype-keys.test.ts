import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../kernel/library-subgraphs.js';
import { expectPrototypeUntouched, pollutingKeys, POLLUTING_OBJECT } from './prototype.js';
import { CacheKeys } from '../../plugins/response-cache/cache-key.js';
import { withEntityParts } from '../../src/kernel/execute/batch-call.js';
import { restoreAliases } from '../../src/kernel/execute/restore-aliases.js';
import { upstreamKey } from '../../src/kernel/subscriptions/upstream-hub.js';
import type { UpstreamTarget } from '../../src/kernel/subscriptions/upstream-ws.js';

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

describe('objects keyed by client names keep a __proto__ key as their own', () => {
  const proto = (value: unknown): Record<string, unknown> => JSON.parse(`{"__proto__": ${JSON.stringify(value)}}`) as Record<string, unknown>;

  it('two subscriptions differing only in $__proto__ do not share an upstream stream', () => {
    const target = (value: string): UpstreamTarget => ({
      subgraph: 'reviews',
      settings: { url: 'ws://127.0.0.1:1/graphql', protocol: 'ws' } as UpstreamTarget['settings'],
      headers: {},
      initPayload: undefined,
      query: 'subscription($__proto__: String) { ticks(who: $__proto__) }',
      operationName: undefined,
      variables: proto(value),
    });
    expect(upstreamKey(target('alice'))).not.toBe(upstreamKey(target('bob')));
  });

  it('the response cache keys entity fetches on a $__proto__ argument', () => {
    const keys = new CacheKeys('');
    const fetch = (value: string) => ({ selectionSet: '{ ... on Book { title(locale: $__proto__) } }', variables: { ...proto(value), representations: [] } });
    expect(keys.fetchHash(fetch('en'))).not.toBe(keys.fetchHash(fetch('fr')));
  });

  it('a batched entity call sends a $__proto__ variable of its parts', () => {
    const part = (alias: string, variable: string) => ({
      alias,
      variable,
      selectionSet: '{ ... on Book { title(locale: $__proto__) } }',
      representations: [{ __typename: 'Book', id: '1' }],
      variables: { ...proto('en'), representations: [{ __typename: 'Book', id: '1' }] },
      variableDefinitions: ['$__proto__: String'],
      fetchId: 1,
    });
    const call = withEntityParts(
      { subgraph: 'books', kind: 'entity', operationType: 'query', query: '', operationName: undefined, variables: {}, representations: undefined, selectionSet: '' } as never,
      [part('_0', 'r0'), part('_1', 'r1')],
    ) as { variables: Record<string, unknown> };
    expect(Object.hasOwn(call.variables, '__proto__')).toBe(true);
    expect(JSON.stringify(call.variables)).toContain('"__proto__":"en"');
  });

  it('restoring planner aliases keeps a client field aliased __proto__ beside them', () => {
    const restored = restoreAliases(JSON.parse('{"__typename":"Movie","v__sy_0":1999,"__proto__":"Heat"}'), [{ path: [], alias: 'v__sy_0', responseKey: 'v' }], () => true);
    expect(JSON.stringify(restored)).toBe('{"__typename":"Movie","v":1999,"__proto__":"Heat"}');
    expectPrototypeUntouched();
  });
});
