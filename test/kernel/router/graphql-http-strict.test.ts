/**
 * What `/graphql` refuses rather than guesses at: bodies it cannot read as
 * sent (a coding it does not decode, compressed twice, or in a charset other
 * than UTF-8: 415; compressed data that does not decompress: 400; more than
 * `limits.max_request_body` once decompressed: 413), malformed
 * multipart `map`s (400), and types the client marks `q=0` in `Accept`
 * (never chosen; 406 when nothing else fits). Errors never quote the body.
 * Every request goes over a socket (the post lane takes what it may, the
 * general handler the rest) and in-process (the general handler alone).
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { TestRouter, TestSubgraph } from '../../../src/testing/index.js';
import { useLibraryRouter } from '../library-hooks.js';

let library: TestSubgraph;
let router: TestRouter;
useLibraryRouter((started) => {
  ({ library, router } = started);
});

interface Sent {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

interface Answer {
  status: number;
  type: string | null;
  body: unknown;
}

/** Over a socket, with a declared length (what the post lane takes). */
function overHttp(sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...sent.headers };
    if (sent.body !== undefined) headers['content-length'] = Buffer.byteLength(sent.body);
    const req = httpRequest(`${router.url}${sent.path ?? '/graphql'}`, { method: sent.method ?? 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: (res.headers['content-type'] as string | undefined) ?? null, body: parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', reject);
    req.end(sent.body);
  });
}

async function inProcess(sent: Sent): Promise<Answer> {
  const method = sent.method ?? 'POST';
  const body = sent.body === undefined || method === 'GET' ? undefined : new Uint8Array(Buffer.from(sent.body));
  const response = await router.router.handle(new Request(`http://router.test${sent.path ?? '/graphql'}`, { method, headers: sent.headers, body }));
  return { status: response.status, type: response.headers.get('content-type'), body: parse(await response.text()) };
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

/** Both ways, which must agree; the socket's answer. */
async function both(sent: Sent): Promise<Answer> {
  const http = await overHttp(sent);
  expect(await inProcess(sent)).toEqual(http);
  return http;
}

const QUERY = JSON.stringify({ query: '{ books { id } }' });
const JSON_TYPE = 'application/json; charset=utf-8';
const SPEC_TYPE = 'application/graphql-response+json; charset=utf-8';
const books = { data: { books: expect.arrayContaining([{ id: 'b1' }]) } };
const refused = (message: string | RegExp) => ({
  errors: [{ message: typeof message === 'string' ? message : expect.stringMatching(message), extensions: { code: 'BAD_REQUEST' } }],
});

describe('request bodies the router cannot read as sent: 415, nothing run', () => {
  const cases: Array<[name: string, headers: Record<string, string>, body: string | Buffer, expected: Partial<Answer>]> = [
    [
      'a body compressed twice',
      { 'content-encoding': 'gzip, gzip' },
      gzipSync(gzipSync(QUERY)),
      { status: 415, type: JSON_TYPE, body: refused(/^Content-Encoding lists 2 codings: the router decodes one \(gzip, deflate or br\)\./) },
    ],
    [
      'a coding not decoded (zstd)',
      { 'content-encoding': 'ZSTD' },
      QUERY,
      { status: 415, body: refused(/^Content-Encoding "zstd" is not supported: the router decodes gzip, deflate and br\./) },
    ],
    ['a coding not decoded (compress)', { 'content-encoding': 'compress' }, QUERY, { status: 415, body: refused(/^Content-Encoding "compress" is not supported/) }],
    ['a coding that is no token, unnamed', { 'content-encoding': '<b>x</b>' }, QUERY, { status: 415, body: refused(/^Content-Encoding is not supported/) }],
    ['charset=utf-16', { 'content-type': 'application/json; charset=utf-16' }, QUERY, { status: 415, body: refused(/^The Content-Type charset "utf-16" is not supported/) }],
    ['charset=latin1', { 'content-type': 'application/json;charset=latin1' }, QUERY, { status: 415, body: refused(/^The Content-Type charset "latin1" is not supported/) }],
    [
      'a non-UTF-8 charset on a GraphQL document body',
      { 'content-type': 'application/graphql; charset=iso-8859-1' },
      '{ books { id } }',
      { status: 415, body: refused(/charset "iso-8859-1" is not supported/) },
    ],
    [
      'a non-UTF-8 charset, Accept graphql-response+json',
      { 'content-type': 'application/json; charset=utf-16', accept: 'application/graphql-response+json' },
      QUERY,
      { status: 415, type: SPEC_TYPE },
    ],
    [
      'a gzip body in a charset other than UTF-8',
      { 'content-type': 'application/json; charset=utf-16', 'content-encoding': 'gzip' },
      gzipSync(QUERY),
      { status: 415, body: refused(/charset "utf-16" is not supported/) },
    ],
    ['an unsupported coding, Accept that fits nothing: 415 first, without a body', { 'content-encoding': 'zstd', accept: 'text/html' }, QUERY, { status: 415, body: undefined }],
  ];
  for (const [name, headers, body, expected] of cases) {
    it(`refuses ${name}`, async () => {
      const before = library.calls.length;
      expect(await both({ headers: { 'content-type': 'application/json', ...headers }, body })).toMatchObject(expected);
      expect(library.calls.length).toBe(before);
    });
  }

  const accepted: Array<[name: string, headers: Record<string, string>]> = [
    ['Content-Encoding: identity', { 'content-encoding': 'identity' }],
    ['charset=utf-8', { 'content-type': 'application/json; charset=utf-8' }],
    ['charset=UTF-8 quoted', { 'content-type': 'application/json; charset="UTF-8"' }],
    ['charset=utf8', { 'content-type': 'application/json;charset=utf8' }],
  ];
  for (const [name, headers] of accepted) {
    it(`runs a body sent with ${name}`, async () => {
      expect(await both({ headers: { 'content-type': 'application/json', ...headers }, body: QUERY })).toMatchObject({ status: 200, body: books });
    });
  }
});

describe('compressed request bodies: decoded (gzip, deflate, br), bounded by limits.max_request_body', () => {
  const compressed: Array<[coding: string, body: Buffer]> = [
    ['gzip', gzipSync(QUERY)],
    ['GZip', gzipSync(QUERY)],
    ['x-gzip', gzipSync(QUERY)],
    ['identity, gzip', gzipSync(QUERY)],
    ['deflate', deflateSync(QUERY)],
    ['br', brotliCompressSync(QUERY)],
  ];
  for (const [coding, body] of compressed) {
    it(`runs a JSON body sent with Content-Encoding: ${coding}`, async () => {
      expect(await both({ headers: { 'content-type': 'application/json', 'content-encoding': coding }, body })).toMatchObject({ status: 200, body: books });
    });
  }

  it('runs a gzip GraphQL document body and a gzip form body', async () => {
    const document = gzipSync('{ books { id } }');
    expect(await both({ headers: { 'content-type': 'application/graphql', 'content-encoding': 'gzip' }, body: document })).toMatchObject({ status: 200, body: books });
    // A form body is a cross-site "simple" request: CSRF prevention wants a preflight header on it.
    const form = gzipSync(`query=${encodeURIComponent('{ books { id } }')}`);
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip', 'graphql-preflight': '1' };
    expect(await both({ headers: formHeaders, body: form })).toMatchObject({ status: 200, body: books });
  });

  const gzipHeaders = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  /** A gzip JSON body padded with `pad` (spaces compress a thousandfold; hex digits about twofold). */
  const padded = (pad: string) => gzipSync(JSON.stringify({ query: '{ books { id } }', extensions: { pad } }));
  const tooLarge = (message: string | RegExp) => ({
    status: 413,
    body: { errors: [{ message: typeof message === 'string' ? message : expect.stringMatching(message), extensions: { code: 'REQUEST_TOO_LARGE' } }] },
  });

  it('answers 413 REQUEST_TOO_LARGE, unrun, for a gzip body that inflates past the limit (1,000,000 bytes), also one of 200 MB from 200 KB', async () => {
    const before = library.calls.length;
    const limit = 'The request body is larger than the limit of 1000000 bytes.';
    expect(await both({ headers: gzipHeaders, body: padded(randomBytes(510_000).toString('hex')) })).toMatchObject(tooLarge(limit));
    // 200 MB once inflated: gzip members one after another are one gzip body (RFC 1952, 2.2).
    const spaces = gzipSync(' '.repeat(10 * 1024 * 1024));
    const huge = Buffer.concat([gzipSync('{"query": "{ books { id } }", "extensions": {"pad": "'), ...Array<Buffer>(20).fill(spaces), gzipSync('"}}')]);
    expect(huge.length).toBeLessThan(256 * 1024);
    expect(await both({ headers: gzipHeaders, body: huge })).toMatchObject(tooLarge(limit));
    // Just under the limit once inflated: read and run.
    const under = padded(randomBytes(499_000).toString('hex'));
    expect(await both({ headers: gzipHeaders, body: under })).toMatchObject({ status: 200, body: books });
    // Both ways (over a socket and in-process) ran it.
    expect(library.calls.length).toBe(before + 2);
  });

  it('answers 413, unrun, for a body that inflates more than 100 times past 64 KiB, so a small request cannot make the router parse a large one', async () => {
    const before = library.calls.length;
    const bomb = padded(' '.repeat(600_000));
    expect(bomb.length).toBeLessThan(2_000);
    expect(await both({ headers: gzipHeaders, body: bomb })).toMatchObject(
      tooLarge(/^The request body decompresses past \d+ bytes from \d+ \(more than 100 times its size\); send it less compressed, or uncompressed\.$/),
    );
    expect(library.calls.length).toBe(before);
    // Within the ratio, or within the first 64 KiB whatever the ratio: read and run.
    expect(await both({ headers: gzipHeaders, body: padded(' '.repeat(60_000)) })).toMatchObject({ status: 200, body: books });
    const repetitive = padded(`${randomBytes(3_000).toString('hex')}${' '.repeat(200_000)}`);
    expect(await both({ headers: gzipHeaders, body: repetitive })).toMatchObject({ status: 200, body: books });
  });

  const corrupt: Array<[name: string, coding: string, body: Buffer]> = [
    ['a plain body declared gzip', 'gzip', Buffer.from(QUERY)],
    ['a gzip body cut short', 'gzip', gzipSync(QUERY).subarray(0, 20)],
    ['an empty body declared gzip', 'gzip', Buffer.alloc(0)],
    ['raw deflate (no zlib header) declared deflate', 'deflate', deflateRawSync(QUERY)],
    ['a plain body declared br', 'br', Buffer.from(QUERY)],
  ];
  for (const [name, coding, body] of corrupt) {
    it(`answers 400 BAD_REQUEST, unrun, for ${name}`, async () => {
      const before = library.calls.length;
      const answer = await both({ headers: { 'content-type': 'application/json', 'content-encoding': coding }, body });
      expect(answer).toMatchObject({ status: 400, body: refused(new RegExp(`^The request body does not decompress as ${coding} \\([A-Za-z ]+\\)\\.$`)) });
      expect(library.calls.length).toBe(before);
    });
  }
});

describe('errors about malformed JSON say where, never what the client sent', () => {
  const secret = 'client-bytes-<script>';
  const invalidJson = (message: unknown) => ({
    errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST', originalError: { name: 'SyntaxError', message } } }],
  });

  it('names no byte of a body that starts wrong', async () => {
    const answer = await both({ headers: { 'content-type': 'application/json' }, body: `${secret}${'x'.repeat(5000)}` });
    expect(answer).toMatchObject({ status: 400, body: invalidJson('Unexpected token in JSON') });
  });

  it('names no byte of a value that is wrong mid-body', async () => {
    const answer = await both({ headers: { 'content-type': 'application/json' }, body: `{"query": ${secret}}` });
    expect(answer).toMatchObject({ status: 400, body: invalidJson('Unexpected token in JSON') });
  });

  it('keeps a reason that only says where parsing stopped', async () => {
    const answer = await both({ headers: { 'content-type': 'application/json' }, body: `{"query":"{ books { id } }"} ${secret}` });
    // Node's own words, which differ by version (Node 24 adds "(line 1 column 30)").
    expect(answer).toMatchObject({
      status: 400,
      body: invalidJson(expect.stringMatching(/^Unexpected non-whitespace character after JSON at position 29( \(line 1 column 30\))?$/)),
    });
  });

  it('names no byte of malformed GET variables', async () => {
    const answer = await both({ method: 'GET', path: `/graphql?query=%7Bbooks%7Bid%7D%7D&variables=${encodeURIComponent(`{"a": ${secret}}`)}` });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).not.toContain('client-bytes');
    expect(answer.body).toMatchObject(refused('The "variables" parameter is not valid JSON: Unexpected token in JSON. Send it as a JSON object, URL-encoded.'));
  });

  it('quotes at most 100 characters of an unknown parameter name', async () => {
    const name = 'p'.repeat(5000);
    const answer = await both({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ books { id } }', [name]: 1 }) });
    expect(answer).toMatchObject({ status: 400, body: refused(`Unexpected parameter "${'p'.repeat(100)}…" in the request body.`) });
  });
});

describe('multipart map: an object of file part names to arrays of paths, each naming a part', () => {
  const HEADERS = { 'content-type': 'multipart/form-data; boundary=file-boundary', 'graphql-preflight': '1' };
  const withMap = (map: string, variables: unknown = { file: null }) =>
    [
      '--file-boundary',
      'Content-Disposition: form-data; name="operations"',
      '',
      JSON.stringify({ query: '{ books { id } }', variables }),
      '--file-boundary',
      'Content-Disposition: form-data; name="map"',
      '',
      map,
      '--file-boundary',
      'Content-Disposition: form-data; name="0"; filename="a.txt"',
      'Content-Type: text/plain',
      '',
      'file contents',
      '--file-boundary--',
      '',
    ].join('\r\n');
  const cases: Array<[name: string, map: string, message: string]> = [
    ['an array', '[1]', 'Multipart form field "map" must be a JSON object of file part names to arrays of paths in "operations".'],
    ['null', 'null', 'Multipart form field "map" must be a JSON object of file part names to arrays of paths in "operations".'],
    ['an entry that is not an array', '{"0":"variables.file"}', 'Multipart form field "map" entry "0" must be an array of paths (strings) in "operations".'],
    ['an entry holding a number', '{"0":[5]}', 'Multipart form field "map" entry "0" must be an array of paths (strings) in "operations".'],
    ['a part the request does not have', '{"1":["variables.file"]}', 'Multipart form field "map" names file part "1", which the request does not have.'],
    ['"operations" as a file part', '{"operations":["variables.file"]}', 'Multipart form field "map" names file part "operations", which the request does not have.'],
  ];
  for (const [name, map, message] of cases) {
    it(`refuses a map that is ${name} with 400`, async () => {
      expect(await both({ headers: HEADERS, body: withMap(map) })).toMatchObject({ status: 400, body: refused(message) });
    });
  }

  it('runs a well-formed map', async () => {
    expect(await both({ headers: HEADERS, body: withMap('{"0":["variables.file"]}') })).toMatchObject({ status: 200, body: books });
  });
});

describe('Accept quality values: q=0 is "not acceptable", higher q preferred', () => {
  const cases: Array<[accept: string, type: string | null, status: number]> = [
    ['application/json;q=0', null, 406],
    ['application/json; q=0.000', null, 406],
    ['application/graphql-response+json;q=0, application/json', JSON_TYPE, 200],
    ['application/graphql-response+json, application/json;q=0', SPEC_TYPE, 400],
    ['application/json;q=0.5, application/graphql-response+json', SPEC_TYPE, 400],
    ['*/*;q=0.1, application/json', JSON_TYPE, 200],
    ['application/json;q=0, */*', SPEC_TYPE, 400],
    ['application/graphql-response+json, */*', SPEC_TYPE, 400],
    ['*/*, application/json', JSON_TYPE, 200],
  ];
  // A validation error: 200 for application/json (GraphQL over HTTP's legacy rule), 400 for graphql-response+json.
  const invalid = JSON.stringify({ query: '{ nope }' });
  for (const [accept, type, status] of cases) {
    it(`Accept: ${accept} -> ${type ?? 'nothing'} (${status})`, async () => {
      const before = library.calls.length;
      expect(await both({ headers: { 'content-type': 'application/json', accept }, body: invalid })).toMatchObject({ status, type });
      expect(await both({ method: 'GET', path: `/graphql?query=${encodeURIComponent('{ nope }')}`, headers: { accept } })).toMatchObject({ status, type });
      expect(library.calls.length).toBe(before);
    });
  }

  it('runs a query with q=0 on one type and the other acceptable', async () => {
    const answer = await both({ headers: { 'content-type': 'application/json', accept: 'application/json;q=0, application/graphql-response+json;q=0.8' }, body: QUERY });
    expect(answer).toMatchObject({ status: 200, type: SPEC_TYPE, body: books });
  });
});

describe('streamed requests (Accept: text/event-stream) read their body the same way', () => {
  const stream = (headers: Record<string, string>, body: Buffer | string) =>
    overHttp({ headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }, body });

  it('streams the answer to a gzip body', async () => {
    const answer = await stream({ 'content-encoding': 'gzip' }, gzipSync(QUERY));
    expect(answer).toMatchObject({ status: 200, type: 'text/event-stream' });
    expect(answer.body).toMatch(/^(:\n\n)?event: next\ndata: \{"data":\{"books":\[\{"id":"b1"\}/);
  });

  it('refuses a coding it does not decode (415), data that does not decompress (400), and past the limit once decoded (413)', async () => {
    expect(await stream({ 'content-encoding': 'zstd' }, QUERY)).toMatchObject({ status: 415, body: refused(/^Content-Encoding "zstd" is not supported/) });
    expect(await stream({ 'content-encoding': 'gzip' }, QUERY)).toMatchObject({ status: 400, body: refused(/^The request body does not decompress as gzip/) });
    const bomb = gzipSync(JSON.stringify({ query: '{ books { id } }', extensions: { pad: ' '.repeat(2 * 1024 * 1024) } }));
    expect(await stream({ 'content-encoding': 'gzip' }, bomb)).toMatchObject({ status: 413, body: { errors: [{ extensions: { code: 'REQUEST_TOO_LARGE' } }] } });
  });
});
