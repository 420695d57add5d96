/**
 * GraphQL over HTTP as the router answers it (graphql-http.ts): method,
 * content type, Accept, body limit, malformed bodies and batches. Each
 * request goes over a socket and to the in-process `handle`, and both must
 * give the status, headers and body fixed here (the answers graphql-yoga
 * gave before the router took them over).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
/** `max_request_body: 2KB`, `max_batch_size: 2`. */
let router: TestRouter;
/** Defaults: batching off. */
let plain: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  router = await startTestRouter({ subgraphs: [library], listen: true, config: { limits: { max_request_body: '2KB', max_batch_size: 2 } } });
  plain = await startTestRouter({ subgraphs: [library], listen: true });
});

afterAll(async () => {
  await router?.close();
  await plain?.close();
  await library?.close();
});

interface Sent {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Sent without a length (chunked), over HTTP. */
  chunked?: boolean;
}

interface Answer {
  status: number;
  type: string | null;
  allow: string | null;
  accept: string | null;
  body: unknown;
}

/** Over a socket (node's client: HEAD, chunked bodies and a wrong Content-Length are possible). */
function overHttp(target: TestRouter, sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...sent.headers };
    if (sent.body !== undefined && !sent.chunked) headers['content-length'] = Buffer.byteLength(sent.body);
    const req = httpRequest(`${target.url}${sent.path ?? '/graphql'}`, { method: sent.method ?? 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const header = (name: string) => (res.headers[name] as string | undefined) ?? null;
        resolve({ status: res.statusCode!, type: header('content-type'), allow: header('allow'), accept: header('accept'), body: parse(Buffer.concat(chunks).toString()) });
      });
    });
    req.on('error', reject);
    if (sent.chunked && sent.body) {
      req.write(sent.body.slice(0, 10));
      req.end(sent.body.slice(10));
    } else req.end(sent.body);
  });
}

async function inProcess(target: TestRouter, sent: Sent): Promise<Answer> {
  const method = sent.method ?? 'POST';
  const response = await target.router.handle(
    new Request(`http://router.test${sent.path ?? '/graphql'}`, { method, headers: sent.headers, body: method === 'GET' || method === 'HEAD' ? undefined : sent.body }),
  );
  const header = (name: string) => response.headers.get(name);
  return { status: response.status, type: header('content-type'), allow: header('allow'), accept: header('accept'), body: parse(await response.text()) };
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';
const SPEC_TYPE = 'application/graphql-response+json; charset=utf-8';
const SPEC = { accept: 'application/graphql-response+json' };
const QUERY = JSON.stringify({ query: '{ books { id } }' });
const error = (message: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({ errors: [{ message, extensions: { code, ...extra } }] });
const NOT_ACCEPTABLE = 'text/event-stream; charset=utf-8, multipart/mixed; charset=utf-8, application/graphql-response+json; charset=utf-8, application/json';
const multipart = (operations: string, map?: string) =>
  [
    '--x',
    'Content-Disposition: form-data; name="operations"',
    '',
    operations,
    ...(map === undefined ? [] : ['--x', 'Content-Disposition: form-data; name="map"', '', map]),
    '--x--',
    '',
  ].join('\r\n');
/** A multipart body (`FILE_MULTIPART`) with one file part, `0`, mapped to `paths` (the query ignores the variables). */
const withFile = (variables: unknown, paths: string[]) =>
  [
    '--file-boundary',
    'Content-Disposition: form-data; name="operations"',
    '',
    JSON.stringify({ query: '{ books { id } }', variables }),
    '--file-boundary',
    'Content-Disposition: form-data; name="map"',
    '',
    JSON.stringify({ 0: paths }),
    '--file-boundary',
    'Content-Disposition: form-data; name="0"; filename="a.txt"',
    'Content-Type: text/plain',
    '',
    'file contents',
    '--file-boundary--',
    '',
  ].join('\r\n');
const FILE_MULTIPART = { 'content-type': 'multipart/form-data; boundary=file-boundary', 'graphql-preflight': '1' };
const badMapPath = (path: string) => error(`Multipart form field "map" path "${path}" does not name a null placeholder in "operations".`);
const MULTIPART = { 'content-type': 'multipart/form-data; boundary=x', 'graphql-preflight': '1' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'graphql-preflight': '1' };
const books = { data: { books: expect.arrayContaining([{ id: 'b1' }]) } };

type Case = [name: string, sent: Sent, expected: Partial<Answer>, only?: 'http'];

const cases: Case[] = [
  // Methods.
  [
    'PUT: 405, Allow GET, POST',
    { method: 'PUT', headers: { 'content-type': 'application/json' }, body: QUERY },
    { status: 405, type: JSON_TYPE, allow: 'GET, POST', body: error('GraphQL only supports GET and POST requests.') },
  ],
  ['DELETE: 405', { method: 'DELETE' }, { status: 405, allow: 'GET, POST', body: error('GraphQL only supports GET and POST requests.') }],
  ['OPTIONS without CORS: 405', { method: 'OPTIONS' }, { status: 405, allow: 'GET, POST' }],
  ['HEAD: 405 without a body', { method: 'HEAD' }, { status: 405, allow: 'GET, POST', body: undefined }],
  ['PUT, Accept text/html: 406', { method: 'PUT', headers: { accept: 'text/html' } }, { status: 406, type: null, accept: NOT_ACCEPTABLE, body: undefined }],
  // GET.
  ['GET a query', { method: 'GET', path: '/graphql?query=%7Bbooks%7Bid%7D%7D', headers: SPEC }, { status: 200, type: SPEC_TYPE, body: books }],
  ['GET without a query, legacy client: 200', { method: 'GET' }, { status: 200, type: JSON_TYPE, allow: 'GET, POST', body: error('Must provide query string.') }],
  ['GET without a query: 400', { method: 'GET', headers: SPEC }, { status: 400, type: SPEC_TYPE, allow: 'GET, POST', body: error('Must provide query string.') }],
  [
    'GET a mutation: 405, Allow POST',
    { method: 'GET', path: `/graphql?query=${encodeURIComponent('mutation { addBook(title: "x") { id } }')}` },
    { status: 405, allow: 'POST', body: error('Can only perform a query operation from a GET request; send mutations with POST.', 'METHOD_NOT_ALLOWED') },
  ],
  [
    'GET with Accept that fits nothing: 406',
    { method: 'GET', path: '/graphql?query=%7Bbooks%7Bid%7D%7D', headers: { accept: 'text/html' } },
    { status: 406, accept: NOT_ACCEPTABLE },
  ],
  [
    'Accept with two entries: each type offered once on 406',
    { method: 'GET', path: '/graphql?query=%7Bbooks%7Bid%7D%7D', headers: { accept: 'text/html, application/xml' } },
    { status: 406, accept: NOT_ACCEPTABLE },
  ],
  [
    'a long Accept: the 406 still lists each type once',
    { method: 'GET', path: '/graphql?query=%7Bbooks%7Bid%7D%7D', headers: { accept: Array(1000).fill('x/y').join(',') } },
    { status: 406, accept: NOT_ACCEPTABLE },
  ],
  // Content types.
  ['POST without a content type: 415', { headers: { 'graphql-preflight': '1' }, body: QUERY }, { status: 415, type: null, body: undefined }],
  ['POST text/plain: 415', { headers: { 'content-type': 'text/plain', 'graphql-preflight': '1' }, body: QUERY }, { status: 415, body: undefined }],
  ['POST application/xml with Accept text/html: 415 first', { headers: { 'content-type': 'application/xml', accept: 'text/html' }, body: QUERY }, { status: 415 }],
  [
    'POST application/graphql: the body is the query',
    { headers: { 'content-type': 'application/graphql' }, body: '{ books { id } }' },
    { status: 200, type: JSON_TYPE, body: books },
  ],
  ['POST application/graphql+json', { headers: { 'content-type': 'application/graphql+json' }, body: QUERY }, { status: 200, body: books }],
  ['POST APPLICATION/JSON', { headers: { 'content-type': 'APPLICATION/JSON' }, body: QUERY }, { status: 200, body: books }],
  ['POST a form', { headers: FORM, body: `query=${encodeURIComponent('{ books { id } }')}` }, { status: 200, body: books }],
  [
    'POST a form with variables that are not JSON',
    { headers: FORM, body: 'query=x&variables=%7B' },
    { status: 400, body: { errors: [{ message: expect.stringMatching(/^The "variables" parameter is not valid JSON/), extensions: { code: 'BAD_REQUEST' } }] } },
  ],
  ['POST multipart', { headers: MULTIPART, body: multipart(QUERY, '{}') }, { status: 200, body: books }],
  [
    'POST multipart, operations not JSON',
    { headers: MULTIPART, body: multipart('{"query":') },
    { status: 400, body: error('Multipart form field "operations" must be a valid JSON string') },
  ],
  ['POST multipart, map not JSON', { headers: MULTIPART, body: multipart(QUERY, '{') }, { status: 400, body: error('Multipart form field "map" must be a valid JSON string') }],
  ['POST multipart without operations', { headers: MULTIPART, body: '--x--\r\n' }, { status: 400, body: error('Missing multipart form field "operations"') }],
  [
    'POST multipart that is no multipart',
    { headers: MULTIPART, body: 'garbage' },
    { status: 400, body: { errors: [{ message: expect.stringMatching(/^POST body sent invalid multipart data: /), extensions: { code: 'BAD_REQUEST' } }] } },
  ],
  [
    'POST multipart, operations a number',
    { headers: MULTIPART, body: multipart('5') },
    { status: 400, allow: 'GET, POST', body: error('Expected params to be an object but given number.') },
  ],
  // Malformed JSON bodies.
  [
    'malformed JSON: 400 whatever the client accepts',
    { headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{"query": ' },
    {
      status: 400,
      type: JSON_TYPE,
      body: error('POST body sent invalid JSON.', 'BAD_REQUEST', { originalError: { name: 'SyntaxError', message: 'Unexpected end of JSON input' } }),
    },
  ],
  [
    'malformed JSON, graphql-response+json',
    { headers: { 'content-type': 'application/json', ...SPEC }, body: '' },
    {
      status: 400,
      type: SPEC_TYPE,
      body: error('POST body sent invalid JSON.', 'BAD_REQUEST', { originalError: { name: 'SyntaxError', message: 'Unexpected end of JSON input' } }),
    },
  ],
  ['malformed JSON, Accept text/html: 406', { headers: { 'content-type': 'application/json', accept: 'text/html' }, body: '{"query": ' }, { status: 406, accept: NOT_ACCEPTABLE }],
  ['JSON null', { headers: { 'content-type': 'application/json' }, body: 'null' }, { status: 400, body: error('POST body is expected to be object but received null') }],
  ['a JSON number', { headers: { 'content-type': 'application/json' }, body: '5' }, { status: 400, body: error('POST body is expected to be object but received number') }],
  [
    'a JSON string',
    { headers: { 'content-type': 'application/json' }, body: '"{ books { id } }"' },
    { status: 400, body: error('POST body is expected to be object but received string') },
  ],
  // Body limit.
  [
    'a body over limits.max_request_body: 413',
    { headers: { 'content-type': 'application/json', ...SPEC }, body: JSON.stringify({ query: `{ books { id } } #${'x'.repeat(3000)}` }) },
    { status: 413, type: SPEC_TYPE, body: error('The request body is larger than the limit of 2000 bytes.', 'REQUEST_TOO_LARGE') },
  ],
  [
    'a chunked body over the limit: 413',
    { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ books { id } } #${'x'.repeat(3000)}` }), chunked: true },
    { status: 413, body: error('The request body is larger than the limit of 2000 bytes.', 'REQUEST_TOO_LARGE') },
  ],
  ['a chunked body within the limit', { headers: { 'content-type': 'application/json' }, body: QUERY, chunked: true }, { status: 200, body: books }],
  [
    'a form over the limit: 413',
    { headers: FORM, body: `query=${'x'.repeat(3000)}` },
    { status: 413, body: error('The request body is larger than the limit of 2000 bytes.', 'REQUEST_TOO_LARGE') },
  ],
  // A declared length over the limit is refused before the method or the type is looked at.
  ['PUT with a declared body over the limit: 413', { method: 'PUT', headers: { 'content-type': 'application/xml' }, body: 'x'.repeat(3000) }, { status: 413 }, 'http'],
  // Batches.
  [
    'a batch: 200, one result per entry',
    { headers: { 'content-type': 'application/json', ...SPEC }, body: `[${QUERY},${JSON.stringify({ query: '{ nope }' })}]` },
    {
      status: 200,
      type: SPEC_TYPE,
      body: [
        books,
        { errors: [{ message: 'Cannot query field "nope" on type "Query".', locations: [{ line: 1, column: 3 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] },
      ],
    },
  ],
  [
    'a batch over limits.max_batch_size: 413',
    { headers: { 'content-type': 'application/json' }, body: `[${QUERY},${QUERY},${QUERY}]` },
    { status: 413, body: error('Batching is limited to 2 operations per request.') },
  ],
  ['an empty batch', { headers: { 'content-type': 'application/json' }, body: '[]' }, { status: 200, body: [] }],
  [
    'a batch of bad entries: each refused in its place',
    { headers: { 'content-type': 'application/json' }, body: '[null,{"query":5}]' },
    { status: 200, body: [error('Expected params to be an object but given null.'), error('Expected "query" param to be a string, but given number.')] },
  ],
  [
    'a malformed batch',
    { headers: { 'content-type': 'application/json' }, body: `[${QUERY},` },
    { status: 400, body: expect.objectContaining({ errors: [expect.objectContaining({ message: 'POST body sent invalid JSON.' })] }) },
  ],
  ['a batch in a multipart body', { headers: MULTIPART, body: multipart(`[${QUERY}]`, '{}') }, { status: 200, body: [books] }],
  // Multipart maps: a path may only fill a null the client put in operations.
  [
    'a map path that fills a null placeholder',
    { headers: FILE_MULTIPART, body: withFile({ file: null, list: [null] }, ['variables.file', 'variables.list.0']) },
    { status: 200, body: books },
  ],
  ['a map path to an array length', { headers: FILE_MULTIPART, body: withFile({ a: [null] }, ['variables.a.length']) }, { status: 400, body: badMapPath('variables.a.length') }],
  [
    'a map path far past an array',
    { headers: FILE_MULTIPART, body: withFile({ a: [null] }, ['variables.a.4294967294']) },
    { status: 400, body: badMapPath('variables.a.4294967294') },
  ],
  ['a map path with a non-canonical index', { headers: FILE_MULTIPART, body: withFile({ a: [null] }, ['variables.a.00']) }, { status: 400, body: badMapPath('variables.a.00') }],
  ['a map path to a key that is not there', { headers: FILE_MULTIPART, body: withFile({}, ['variables.file']) }, { status: 400, body: badMapPath('variables.file') }],
  [
    'a map path to a value that is not null',
    { headers: FILE_MULTIPART, body: withFile({ file: 'text' }, ['variables.file']) },
    { status: 400, body: badMapPath('variables.file') },
  ],
  [
    'a map path through __proto__',
    { headers: FILE_MULTIPART, body: withFile(JSON.parse('{"__proto__":{"x":null}}'), ['variables.__proto__.x']) },
    { status: 400, body: badMapPath('variables.__proto__.x') },
  ],
  ['a map path through a string', { headers: FILE_MULTIPART, body: withFile({ s: 'text' }, ['variables.s.length']) }, { status: 400, body: badMapPath('variables.s.length') }],
  // Parameters.
  [
    'an unknown parameter',
    { headers: { 'content-type': 'application/json' }, body: '{"query":"{ books { id } }","foo":1}' },
    { status: 400, body: error('Unexpected parameter "foo" in the request body.') },
  ],
  [
    'a query that is not a string',
    { headers: { 'content-type': 'application/json' }, body: '{"query":5}' },
    { status: 400, allow: 'GET, POST', body: error('Expected "query" param to be a string, but given number.') },
  ],
];

describe('GraphQL over HTTP, over a socket and in-process', () => {
  for (const [name, sent, expected, only] of cases) {
    it(name, async () => {
      expect(await overHttp(router, sent)).toMatchObject(expected);
      if (only !== 'http') expect(await inProcess(router, sent)).toMatchObject(expected);
    });
  }
});

describe('with batching off (the default)', () => {
  it('refuses a batch with 400', async () => {
    const sent: Sent = { headers: { 'content-type': 'application/json' }, body: `[${QUERY}]` };
    const expected = { status: 400, body: error('Batching is not supported.') };
    expect(await overHttp(plain, sent)).toMatchObject(expected);
    expect(await inProcess(plain, sent)).toMatchObject(expected);
  });

  it('runs nothing when the answer could not be sent (406), and keeps serving', async () => {
    const before = library.calls.length;
    const answer = await overHttp(plain, {
      headers: { 'content-type': 'application/json', accept: 'text/html' },
      body: JSON.stringify({ query: 'mutation { addBook(title: "never") { id } }' }),
    });
    expect(answer.status).toBe(406);
    expect(library.calls.length).toBe(before);
    expect((await plain.query('{ books { id } }')).status).toBe(200);
  });
});

describe('bounded work for a small body', () => {
  it('refuses a multipart map with more than 1000 paths with 413', async () => {
    const variables = { files: Array(1001).fill(null) };
    const sent: Sent = {
      headers: FILE_MULTIPART,
      body: withFile(
        variables,
        variables.files.map((_, i) => `variables.files.${i}`),
      ),
    };
    const expected = { status: 413, body: error('Multipart form field "map" names more than 1000 paths.') };
    expect(await overHttp(plain, sent)).toMatchObject(expected);
    expect(await inProcess(plain, sent)).toMatchObject(expected);
    // 1000 are fine.
    const fits = { files: Array(1000).fill(null) };
    expect(
      await overHttp(plain, {
        headers: FILE_MULTIPART,
        body: withFile(
          fits,
          fits.files.map((_, i) => `variables.files.${i}`),
        ),
      }),
    ).toMatchObject({ status: 200 });
  });

  it('answers a declared Content-Length over the limit with 413 and closes the connection, not reading the body', async () => {
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = httpRequest(`${router.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': 1_000_000_000 } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
      });
      req.on('error', reject);
      // The body never comes: the answer must not wait for it, and the connection must not stay open to drain it.
      req.write('{"query":');
    });
    expect(answer).toEqual({ status: 413, connection: 'close' });
  });
});

describe('in-process requests that ask for a stream', () => {
  it('get one result as an event stream', async () => {
    const response = await plain.router.handle(
      new Request('http://router.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: QUERY }),
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toMatch(/^:\n\nevent: next\ndata: \{"data":\{"books":\[.*\]\}\}\n\nevent: complete\ndata:\n\n$/);
  });

  it('get one result as a multipart answer', async () => {
    const response = await plain.router.handle(
      new Request('http://router.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'multipart/mixed' }, body: QUERY }),
    );
    expect(response.headers.get('content-type')).toBe('multipart/mixed; boundary="-"');
    expect(await response.text()).toMatch(/^\r\n---\r\nContent-Type: application\/json; charset=utf-8\r\nContent-Length: \d+\r\n\r\n\{"data".*\}\r\n-----\r\n$/);
  });
});
