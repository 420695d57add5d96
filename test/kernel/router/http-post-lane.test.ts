/**
 * Plain JSON POSTs to /graphql take the post lane (graphql-post-lane.ts).
 * Clients must not be able to tell: every request here is sent over HTTP
 * (the lane, or the general handler when the lane declines) and in-process
 * (the general handler, graphql-http.ts, alone), and the two answers must be
 * the same status, content type, caching headers and body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { resultTypeFor } from '../../../src/kernel/router/result-head.js';
import { librarySubgraph, peopleSubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
let people: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  people = await startSubgraph(peopleSubgraph());
  router = await startTestRouter({ subgraphs: [library, people], listen: true, config: { limits: { max_request_body: '2KB', max_batch_size: 2 } } });
});

afterAll(async () => {
  await router?.close();
  await library?.close();
  await people?.close();
});

interface Answer {
  status: number;
  contentType: string | null;
  cacheControl: string | null;
  allow: string | null;
  body: string;
}

async function answerOf(response: Response): Promise<Answer> {
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    cacheControl: response.headers.get('cache-control'),
    allow: response.headers.get('allow'),
    body: await response.text(),
  };
}

/** The same request over HTTP and through the general handler in-process. */
async function both(body: string, headers: Record<string, string> = {}): Promise<{ http: Answer; general: Answer }> {
  const init = { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body };
  const http = await answerOf(await fetch(`${router.url}/graphql`, init));
  const general = await answerOf(await router.router.handle(new Request('http://router.test/graphql', init)));
  return { http, general };
}

const QUERY = JSON.stringify({ query: '{ books { id title author { name } } }' });

describe('JSON POSTs to /graphql answer exactly as the general GraphQL over HTTP handler does', () => {
  const cases: Array<[string, string, Record<string, string>?]> = [
    ['a query across two subgraphs', QUERY],
    [
      'a query with variables and an operation name',
      JSON.stringify({ query: 'query B($id: ID!) { book(id: $id) { title } } query C { books { id } }', variables: { id: 'b2' }, operationName: 'B' }),
    ],
    ['a query whose field fails (data and errors)', JSON.stringify({ query: '{ failing book(id: "b1") { id } }' })],
    ['a non-null root field that fails (data null)', JSON.stringify({ query: '{ mustNotFail }' })],
    ['a validation error, application/json', JSON.stringify({ query: '{ nope }' }), { accept: 'application/json' }],
    ['a validation error, graphql-response+json', JSON.stringify({ query: '{ nope }' }), { accept: 'application/graphql-response+json' }],
    ['a syntax error', JSON.stringify({ query: '{ books { ' }), { accept: 'application/graphql-response+json' }],
    ['bad variables', JSON.stringify({ query: 'query B($id: ID!) { book(id: $id) { title } }', variables: { id: [1] } })],
    ['an unknown operation name', JSON.stringify({ query: '{ books { id } }', operationName: 'Nope' })],
    ['a mutation', JSON.stringify({ query: 'mutation { addBook(title: "Kim") { title } }' })],
    ['an unknown body parameter', JSON.stringify({ query: '{ books { id } }', foo: 1 })],
    ['an unknown body parameter that is null', JSON.stringify({ query: '{ books { id } }', foo: null })],
    ['null operationName, variables and extensions', JSON.stringify({ query: '{ books { id } }', operationName: null, variables: null, extensions: null })],
    ['an operationName that is not a string', JSON.stringify({ query: '{ books { id } }', operationName: 7 })],
    ['a documentId without a plugin to resolve it', JSON.stringify({ documentId: 'abc' }), { accept: 'application/graphql-response+json' }],
    ['documentId and doc_id both', JSON.stringify({ documentId: 'abc', doc_id: 'def' })],
    ['a documentId that is not a string', JSON.stringify({ documentId: 5 })],
    ['an empty doc_id', JSON.stringify({ doc_id: '' })],
    ['extensions.persistedQuery without a query', JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'ab' } } })],
    ['extensions that are not an object', JSON.stringify({ query: '{ books { id } }', extensions: [1] })],
    ['variables that are not an object', JSON.stringify({ query: '{ books { id } }', variables: '{"a":1}' })],
    ['a query that is not a string', JSON.stringify({ query: 5 })],
    ['an empty query', JSON.stringify({ query: '' })],
    ['no query at all', '{}', { accept: 'application/graphql-response+json' }],
    ['malformed JSON', '{"query": '],
    ['a JSON body that is not an object', '"{ books { id } }"'],
    ['a batch', `[${QUERY},${QUERY}]`],
    ['a batch over the limit', `[${QUERY},${QUERY},${QUERY}]`],
    ['a body over limits.max_request_body', JSON.stringify({ query: `{ books { id } } # ${'x'.repeat(3000)}` })],
    ['Accept: */*', QUERY, { accept: '*/*' }],
    ['Accept preferring graphql-response+json', QUERY, { accept: 'application/graphql-response+json, application/json' }],
    ['Accept preferring application/json', QUERY, { accept: 'application/json;q=0.9, application/graphql-response+json' }],
    ['Accept: application/*', JSON.stringify({ query: '{ nope }' }), { accept: 'application/*' }],
    ['Accept with a charset the router cannot send', QUERY, { accept: 'application/json; charset=latin1' }],
    ['Accept that no GraphQL answer fits', QUERY, { accept: 'text/html' }],
    ['Accept: text/event-stream', QUERY, { accept: 'text/event-stream' }],
    ['content type with a charset', QUERY, { 'content-type': 'application/json; charset=utf-8' }],
  ];

  for (const [name, body, headers] of cases) {
    it(name, async () => {
      const { http, general } = await both(body, headers);
      expect(http).toEqual(general);
    });
  }
});

describe('the answer', () => {
  it('carries the data across subgraphs', async () => {
    const { http } = await both(JSON.stringify({ query: '{ book(id: "b3") { id title author { name } } }' }));
    expect(http.status).toBe(200);
    expect(JSON.parse(http.body)).toEqual({ data: { book: { id: 'b3', title: 'Ubik', author: { name: 'Philip K. Dick' } } } });
  });

  it('passes repeated request headers to the pipeline joined, as the fetch API does', async () => {
    const seen: string[] = [];
    const probe = await startTestRouter({
      subgraphs: [library],
      listen: true,
      config: { headers: { all: { request: [{ op: 'propagate', named: 'authorization' }] } } },
    });
    try {
      library.calls.length = 0;
      const response = await new Promise<number>((resolve, reject) => {
        // fetch() joins repeated headers itself; node:http sends them as written (and node keeps only the first authorization).
        import('node:http').then(({ request }) => {
          const body = JSON.stringify({ query: '{ books { id } }' });
          // An array value sends one header line per item.
          const req = request(`${probe.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.setHeader('authorization', ['a', 'b']);
          req.on('error', reject);
          req.end(body);
        }, reject);
      });
      expect(response).toBe(200);
      for (const call of library.calls) seen.push(String(call.headers.authorization));
      expect(seen).toEqual(['a, b']);
    } finally {
      await probe.close();
    }
  });
});

describe('resultTypeFor reads Accept as GraphQL over HTTP clients expect', () => {
  it.each([
    [undefined, 'application/json'],
    ['', 'application/json'],
    ['*/*', 'application/json'],
    ['application/graphql-response+json', 'application/graphql-response+json'],
    ['application/graphql-response+json, application/json', 'application/graphql-response+json'],
    ['application/json, application/graphql-response+json', 'application/json'],
    ['text/html, application/graphql-response+json', 'application/graphql-response+json'],
    ['APPLICATION/JSON', 'application/json'],
    ['application/json; charset=latin1', undefined],
    ['application/json; charset="utf-8"', 'application/json'],
    ['application/json;charset=UTF8', 'application/json'],
    ['text/html', undefined],
    ['text/event-stream', undefined],
  ])('%s -> %s', (accept, expected) => {
    expect(resultTypeFor(accept)).toBe(expected);
  });
});
