import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  router = await startTestRouter({
    subgraphs: [library],
    listen: true,
    config: {
      limits: { max_request_body: '2KB', max_depth: 2, max_aliases: 2, max_tokens: 200, max_batch_size: 2 },
      cors: { enabled: true, allow_origins: ['https://app.example'] },
    },
  });
});

afterAll(async () => {
  await router?.close();
  await library?.close();
});

async function post(body: string, headers: Record<string, string> = {}) {
  const response = await router.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as { errors?: Array<{ message: string; extensions?: { code?: string } }> }) : undefined };
}

const GRAPHQL_RESPONSE = { accept: 'application/graphql-response+json' };

describe('GraphQL over HTTP', () => {
  it('answers GET with the query in the URL', async () => {
    const response = await router.query({ method: 'GET', query: '{ book(id: "b2") { title } }' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { book: { title: 'Emma' } } });
  });

  it('refuses mutations over GET with 405', async () => {
    const response = await router.query({ method: 'GET', query: 'mutation { addBook(title: "x") { id } }' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(response.body.errors?.[0]?.extensions?.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers malformed JSON with 400', async () => {
    const response = await post('{"query": ');
    expect(response.status).toBe(400);
    expect(response.json?.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  it('answers a wrong content type with 415', async () => {
    // text/plain without a preflight header is refused before this (CSRF_PREVENTED); with one, the type itself is the problem.
    const response = await router.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'text/plain', 'graphql-preflight': '1' }, body: '{ books { id } }' });
    expect(response.status).toBe(415);
  });

  it('answers a request without a query with 400 for graphql-response+json and 200 for application/json', async () => {
    expect((await post('{}', GRAPHQL_RESPONSE)).status).toBe(400);
    const legacy = await post('{}', { accept: 'application/json' });
    expect(legacy.status).toBe(200);
    expect(legacy.json?.errors?.[0]?.message).toBe('Must provide query string.');
  });

  it('answers an automatic persisted query hash while no plugin serves hashes with PersistedQueryNotSupported, so that APQ clients send the text', async () => {
    const hash = { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } };
    // What Apollo Client's persisted-queries link and urql's persisted exchange look for (message or code), then they resend with the query.
    const expected = { errors: [{ message: 'PersistedQueryNotSupported', extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' } }] };
    const legacy = await post(JSON.stringify(hash), { accept: 'application/json' });
    expect({ status: legacy.status, body: legacy.json }).toEqual({ status: 200, body: expected });
    const spec = await post(JSON.stringify(hash), GRAPHQL_RESPONSE);
    expect({ status: spec.status, body: spec.json }).toEqual({ status: 400, body: expected });
    const get = await router.fetch(`/graphql?extensions=${encodeURIComponent(JSON.stringify(hash.extensions))}`);
    expect(await get.json()).toEqual(expected);
    // The text with the hash runs as a plain query.
    const both = await post(JSON.stringify({ query: '{ books { id } }', ...hash }), GRAPHQL_RESPONSE);
    expect(both.status).toBe(200);
    expect(both.json?.errors).toBeUndefined();
  });

  it('answers a syntax error with GRAPHQL_PARSE_FAILED and its location', async () => {
    const response = await post(JSON.stringify({ query: '{ books { id ' }), GRAPHQL_RESPONSE);
    expect(response.status).toBe(400);
    expect(response.json?.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' }, locations: [{ line: 1, column: 14 }] });
  });

  it('answers a validation error with GRAPHQL_VALIDATION_FAILED', async () => {
    const response = await post(JSON.stringify({ query: '{ books { isbn } }' }), GRAPHQL_RESPONSE);
    expect(response.status).toBe(400);
    expect(response.json?.errors?.[0]).toMatchObject({ message: 'Cannot query field "isbn" on type "Book".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('answers an unknown operation name with OPERATION_NOT_FOUND', async () => {
    const response = await post(JSON.stringify({ query: 'query A { books { id } }', operationName: 'B' }), GRAPHQL_RESPONSE);
    expect(response.status).toBe(400);
    expect(response.json?.errors?.[0]?.extensions?.code).toBe('OPERATION_NOT_FOUND');
  });

  it('answers a body over limits.max_request_body with 413 REQUEST_TOO_LARGE', async () => {
    const response = await post(JSON.stringify({ query: `{ books { id } }${' '.repeat(3000)}` }));
    expect(response.status).toBe(413);
    expect(response.json?.errors?.[0]?.extensions?.code).toBe('REQUEST_TOO_LARGE');
  });

  it('enforces the depth limit, following fragments', async () => {
    expect((await post(JSON.stringify({ query: '{ books { id } }' }))).status).toBe(200);
    const direct = await post(JSON.stringify({ query: '{ book(id: "b1") { author { id } } }' }));
    expect(direct).toMatchObject({ status: 400, json: { errors: [{ extensions: { code: 'MAX_DEPTH_EXCEEDED' } }] } });
    const viaFragment = await post(JSON.stringify({ query: 'fragment F on Book { author { id } } { book(id: "b1") { ...F } }' }));
    expect(viaFragment).toMatchObject({ status: 400, json: { errors: [{ extensions: { code: 'MAX_DEPTH_EXCEEDED' } }] } });
  });

  it('enforces the alias and token limits', async () => {
    expect((await post(JSON.stringify({ query: '{ a: books { id } b: books { id } }' }))).status).toBe(200);
    const aliases = await post(JSON.stringify({ query: '{ a: books { id } b: books { id } c: books { id } }' }));
    expect(aliases).toMatchObject({ status: 400, json: { errors: [{ extensions: { code: 'MAX_ALIASES_EXCEEDED' } }] } });
    const tokens = await post(JSON.stringify({ query: `{ ${'books { id } '.repeat(60)} }` }));
    expect(tokens).toMatchObject({ status: 400, json: { errors: [{ extensions: { code: 'MAX_TOKENS_EXCEEDED' } }] } });
  });

  it('keeps serving after every kind of bad request', async () => {
    const response = await router.query('{ book(id: "b1") { title } }');
    expect(response.body).toEqual({ data: { book: { title: 'Dune' } } });
  });

  it('accepts batches up to limits.max_batch_size', async () => {
    const batch = await post(JSON.stringify([{ query: '{ book(id: "b1") { title } }' }, { query: '{ book(id: "b2") { title } }' }]));
    expect(batch.json).toEqual([{ data: { book: { title: 'Dune' } } }, { data: { book: { title: 'Emma' } } }]);
    const tooMany = await post(JSON.stringify([{ query: '{ books { id } }' }, { query: '{ books { id } }' }, { query: '{ books { id } }' }]));
    expect(tooMany.status).toBe(413);
  });
});

describe('the router endpoints', () => {
  it('reports liveness (also at /health, as Cosmo) and readiness', async () => {
    const live = await router.fetch('/health/live');
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
    const health = await router.fetch('/health');
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await router.fetch('/health/ready');
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
  });

  it('serves the playground at / with its assets inline', async () => {
    const response = await router.fetch('/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    expect(html).toContain('renderYogaGraphiQL');
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
  });

  it('answers unknown paths with 404', async () => {
    expect((await router.fetch('/nope')).status).toBe(404);
  });

  it('answers CORS preflights for allowed origins', async () => {
    const response = await router.fetch('/graphql', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBeLessThan(300);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });
});
