/**
 * Issue 19, the HTTP surface of `/graphql` and `/` against hostile clients:
 * CORS never hands a foreign origin credentials, cross-site simple POSTs are
 * refused before anything runs (CSRF), every malformed client input is a
 * 4xx (never a 5xx, never an error log), query plans follow
 * `query_plans.enabled`, and the playground cannot be framed.
 *
 * Requests go over real sockets with exactly the headers given (node:http:
 * no implicit `Content-Type`), and in-process through `router.handle()`.
 */
import fc from 'fast-check';
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LookupSource } from '../../plugins/persisted-operations/lookup-source.js';
import { usePersistedOperations } from '../../plugins/persisted-operations/index.js';
import { defaultConfig } from '../../src/kernel/config/load-config.js';
import { createLogger, type Logger } from '../../src/index.js';
import { CorsPolicy } from '../../src/kernel/router/cors.js';
import { OperationsStore, openOperationsStore, sha256Hex, type OperationsStorage } from '../../src/operations/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';
import { graphqlInput, tempDir } from '../operations/support/operations.js';

/** One answer over HTTP. */
interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** One request on its own connection, headers exactly as given. */
function send(router: TestRouter, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const url = new URL(options.path ?? '/graphql', router.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: options.method ?? 'POST', agent: false, headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function json(router: TestRouter, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send(router, { headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

function get(router: TestRouter, query: string, headers: Record<string, string> = {}): Promise<Answer> {
  return send(router, { method: 'GET', path: `/graphql?${query}`, headers });
}

/** Raw bytes on a socket; resolves with what came back once the router closes or `ms` passes. */
function raw(router: TestRouter, text: string, ms = 2_000): Promise<string> {
  const url = new URL(router.url!);
  return new Promise((resolve) => {
    let out = '';
    const socket = connect(Number(url.port), url.hostname, () => socket.write(text));
    socket.on('data', (chunk) => (out += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(out));
    setTimeout(() => socket.destroy(), ms).unref();
  });
}

function code(answer: Answer): string | undefined {
  return (JSON.parse(answer.text) as { errors?: Array<{ extensions?: { code?: string } }> }).errors?.[0]?.extensions?.code;
}

/** A logger whose lines the test reads. */
function collecting(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { logger, lines };
}

/** Error-level lines (or any line with a stack trace above debug). */
function trouble(lines: ReadonlyArray<Record<string, unknown>>): unknown[] {
  return lines.filter((line) => line.level === 'error' || line.level === 'fatal' || (line.level !== 'debug' && JSON.stringify(line).includes('"stack"')));
}

const STRICT = { accept: 'application/graphql-response+json' };
const ADD_BOOK = 'mutation { addBook(title: "csrf") { id } }';

let library: TestSubgraph;
let store: { path: string; remove(): Promise<void> };
const logs = collecting();
let plain: TestRouter;
let exact: TestRouter;
let star: TestRouter;
const starLogs = collecting();
let mixed: TestRouter;
let noIntrospection: TestRouter;
let plansOn: TestRouter;
let plansOff: TestRouter;
let csrfOff: TestRouter;
let customCsrf: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  store = await tempDir();
  const operations = await openOperationsStore({ provider: 'file', path: store.path });
  await operations.push('default', 'web', [graphqlInput('query Titles { book(id: "b1") { title } }')]);
  await operations.close();
  const subgraphs = [library];
  const start = (config: Parameters<typeof startTestRouter>[0]['config'], logger: Logger = logs.logger, plugins: Parameters<typeof startTestRouter>[0]['plugins'] = []) =>
    startTestRouter({ subgraphs, listen: true, config, logger, plugins });
  [plain, exact, star, mixed, noIntrospection, plansOn, plansOff, csrfOff, customCsrf] = await Promise.all([
    start({ limits: { max_batch_size: 10 } }, logs.logger, [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: store.path } })]),
    start({
      cors: {
        enabled: true,
        allow_origins: ['https://App.Example.com/', 'https://*.example.org', 'https://app-*.example.net', 'http://localhost:*'],
        allow_credentials: true,
        allow_headers: ['Content-Type', 'Authorization'],
        max_age: '10m',
      },
    }),
    start({ cors: { enabled: true, allow_origins: ['*'], allow_credentials: true } }, starLogs.logger),
    start({ cors: { enabled: true, allow_origins: ['*', 'https://app.example.com'], allow_credentials: true } }),
    start({ introspection: { enabled: false } }),
    start({ introspection: { enabled: false }, query_plans: { enabled: true } }),
    start({ query_plans: { enabled: false } }),
    start({ csrf_prevention: { enabled: false } }),
    start({ csrf_prevention: { required_headers: ['X-Requested-By'] } }),
  ]);
});

afterAll(async () => {
  await Promise.all([plain, exact, star, mixed, noIntrospection, plansOn, plansOff, csrfOff, customCsrf].map((router) => router?.close()));
  await library?.close();
  await store?.remove();
});

describe('CORS', () => {
  const query = JSON.stringify({ query: '{ __typename }' });

  it('echoes an exact origin with credentials and Vary: Origin, on the JSON lane, on yoga and in-process', async () => {
    const origin = 'https://app.example.com';
    for (const answer of [await json(exact, query, { origin }), await get(exact, 'query=%7B__typename%7D', { origin }), await json(exact, `[${query}]`, { origin })]) {
      expect(answer.headers['access-control-allow-origin']).toBe(origin);
      expect(answer.headers['access-control-allow-credentials']).toBe('true');
      expect(answer.headers.vary).toMatch(/\bOrigin\b/);
    }
    const inProcess = await exact.router.handle(
      new Request('http://router.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: query }),
    );
    expect(inProcess.headers.get('access-control-allow-origin')).toBe(origin);
    expect(inProcess.headers.get('access-control-allow-credentials')).toBe('true');
    expect(await inProcess.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('matches patterns within the host only, scheme and port included', async () => {
    const allowed = ['https://a.example.org', 'https://a.b.example.org', 'https://app-7.example.net', 'http://localhost:5173', 'http://localhost'];
    const refused = [
      'https://example.org',
      'https://evilexample.org',
      'http://a.example.org',
      'https://a.example.org:8443',
      'https://a.example.org.evil.test',
      'https://a.example.org%60.evil.test',
      'https://app-.example.net',
      'https://localhost:5173',
      'https://app.example.com.evil.test',
      'null',
      'https://evil.test',
    ];
    for (const origin of allowed) {
      const answer = await json(exact, query, { origin });
      expect([origin, answer.headers['access-control-allow-origin'], answer.headers['access-control-allow-credentials']]).toEqual([origin, origin, 'true']);
    }
    for (const origin of refused) {
      const answer = await json(exact, query, { origin });
      expect(answer.status).toBe(200);
      expect([origin, answer.headers['access-control-allow-origin'], answer.headers['access-control-allow-credentials']]).toEqual([origin, undefined, undefined]);
      expect(answer.headers.vary).toMatch(/\bOrigin\b/);
    }
  });

  it('answers "*" without credentials for allow_origins ["*"] with credentials on, and warns at startup', async () => {
    for (const origin of ['https://evil.test', 'https://app.example.com', 'null']) {
      for (const answer of [await json(star, query, { origin }), await get(star, 'query=%7B__typename%7D', { origin })]) {
        expect(answer.headers['access-control-allow-origin']).toBe('*');
        expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
      }
      const preflight = await send(star, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    }
    const warnings = starLogs.lines.filter((line) => line.level === 'warn' && String(line.msg).includes('allow_credentials'));
    expect(warnings).toHaveLength(1);
  });

  it('gives credentials only to origins listed by name when "*" is listed beside them', async () => {
    const listed = await json(mixed, query, { origin: 'https://app.example.com' });
    expect([listed.headers['access-control-allow-origin'], listed.headers['access-control-allow-credentials']]).toEqual(['https://app.example.com', 'true']);
    const other = await json(mixed, query, { origin: 'https://evil.test' });
    expect([other.headers['access-control-allow-origin'], other.headers['access-control-allow-credentials']]).toEqual(['*', undefined]);
    expect(other.headers.vary).toMatch(/\bOrigin\b/);
  });

  it('answers preflights: the allowed methods, headers and max age for a listed origin, no CORS headers for another', async () => {
    const allowed = await send(exact, {
      method: 'OPTIONS',
      headers: { origin: 'https://a.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers).toMatchObject({
      'access-control-allow-origin': 'https://a.example.org',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST, HEAD',
      'access-control-allow-headers': 'Content-Type, Authorization',
      'access-control-max-age': '600',
    });
    expect(allowed.headers.vary).toMatch(/\bOrigin\b/);
    const refused = await send(exact, { method: 'OPTIONS', headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST' } });
    expect(refused.status).toBe(204);
    for (const name of ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods', 'access-control-allow-headers']) {
      expect(refused.headers[name]).toBeUndefined();
    }
    // OPTIONS that is not a preflight is no GraphQL request.
    expect((await send(exact, { method: 'OPTIONS', headers: { origin: 'https://a.example.org' } })).status).toBe(405);
    const inProcess = await exact.router.handle(
      new Request('http://router.test/graphql', { method: 'OPTIONS', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST' } }),
    );
    expect([inProcess.status, inProcess.headers.get('access-control-allow-origin')]).toEqual([204, 'http://localhost:3000']);
  });

  it('refuses to start on an entry that is no origin or pattern, naming it', () => {
    const cors = (allow_origins: string[]) => ({ ...defaultConfig().cors, enabled: true, allow_origins });
    for (const entry of ['https://app.example.com/graphql', 'app.example.com', 'https://*', 'https://app.*', 'https://*.example.com:*x', 'null']) {
      expect(() => new CorsPolicy(cors(['https://ok.example.com', entry])), entry).toThrow(/cors\.allow_origins\[1\]/);
    }
    expect(() => new CorsPolicy(cors(['*', 'https://*.example.com', 'http://localhost:*', 'http://[::1]:8080', 'http://127.0.0.1:3000']))).not.toThrow();
  });

  it('matches an Origin against patterns with many "*" in time linear in its length', () => {
    const policy = new CorsPolicy({
      ...defaultConfig().cors,
      enabled: true,
      allow_origins: ['https://*.*.*.*.example.com', 'https://*-*-*-*-*.example.com', 'https://*-*.*-*.example.com'],
    });
    // Near misses built to make a backtracking matcher try every split (seconds each before).
    const hostile = ['a.', 'a-', 'a-a.'].map((unit) => `https://${unit.repeat(140)}a.example.co`.slice(0, 300));
    hostile.push(`https://${'a'.repeat(285)}.example.co`, `https://${'a-'.repeat(5000)}a.example.com`);
    const started = performance.now();
    for (const origin of hostile) expect(policy.matches(origin), origin.slice(0, 40)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
    expect(['https://a.b.c.d.example.com', 'https://a-b-c-d-e.example.com', 'https://a-b.c-d.example.com'].map((o) => policy.matches(o))).toEqual([true, true, true]);
    expect(['https://a.b.c.example.com', 'https://a-b-c-d.example.com', 'https://a-b.c.example.com'].map((o) => policy.matches(o))).toEqual([false, false, false]);
  });

  it('matches patterns exactly as "*" = one or more labels or parts of one (against a regular expression on short origins)', () => {
    const piece = fc.constantFrom('*', 'a', 'b', '-', '.', 'a.', '.b');
    const hostPart = fc.constantFrom('a', 'b', '-', '.', 'ab', 'a.b');
    const tail = fc.constantFrom('.example.com', '.example.com', '-x.example.com', 'b.example.com', 'example.com', '.example.co');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.array(fc.array(hostPart, { maxLength: 3 }), { minLength: 1, maxLength: 6 }), tail, (pieces, fills, end) => {
        const host = `${pieces.join('')}.example.com`;
        let policy: CorsPolicy;
        try {
          policy = new CorsPolicy({ ...defaultConfig().cors, enabled: true, allow_origins: [`https://${host}`] });
        } catch {
          return; // not a pattern the router accepts
        }
        const origin = `https://${pieces.map((text, i) => (text === '*' ? fills[i % fills.length]!.join('') : text)).join('')}${end}`;
        const wildcard = '[a-z0-9-]+(?:\\.[a-z0-9-]+)*';
        const source = host
          .split('*')
          .map((text) => text.replace(/[.-]/g, '\\$&'))
          .join(wildcard);
        const served = /^https:\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*)$/.exec(origin);
        const expected = served !== null && new RegExp(`^${source}$`).test(served[1]!);
        expect(policy.matches(origin), `${host} ~ ${origin}`).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a pattern that ends in a top-level domain when credentials are on, and takes it without them', () => {
    const cors = (allow_origins: string[], allow_credentials: boolean) => ({ ...defaultConfig().cors, enabled: true, allow_origins, allow_credentials });
    for (const entry of ['https://*.com', 'https://app-*.com', 'https://*x.com', 'https://*example.com']) {
      expect(() => new CorsPolicy(cors(['https://ok.example.com', entry], true)), entry).toThrow(/cors\.allow_origins\[1\].*two labels at least/);
      expect(() => new CorsPolicy(cors(['https://ok.example.com', entry], false)), entry).not.toThrow();
    }
    const policy = new CorsPolicy(cors(['https://*.example.com', 'https://*-app.example.net', 'https://*.co.uk'], true));
    expect(['https://a.example.com', 'https://x-app.example.net', 'https://evil.com'].map((origin) => policy.matches(origin))).toEqual([true, true, false]);
    // Nobody can register a site under .localhost: local development keeps its patterns.
    const local = new CorsPolicy(cors(['http://*.localhost:*', 'http://*.*.localhost:3000'], true));
    expect(['http://app.localhost:5173', 'http://a.b.localhost:3000', 'http://app.localhost.evil.com:3000'].map((origin) => local.matches(origin))).toEqual([true, true, false]);
  });
});

describe('CSRF prevention', () => {
  const simple: Array<{ name: string; headers: Record<string, string>; body: string }> = [
    { name: 'form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `query=${encodeURIComponent(ADD_BOOK)}` },
    { name: 'form with a charset', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' }, body: `query=${encodeURIComponent(ADD_BOOK)}` },
    {
      name: 'multipart',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      body: [
        '--x',
        'Content-Disposition: form-data; name="operations"',
        '',
        JSON.stringify({ query: ADD_BOOK }),
        '--x',
        'Content-Disposition: form-data; name="map"',
        '',
        '{}',
        '--x--',
        '',
      ].join('\r\n'),
    },
    { name: 'text/plain', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: ADD_BOOK }) },
    { name: 'TEXT/PLAIN with a charset', headers: { 'content-type': 'TEXT/PLAIN;charset=UTF-8' }, body: JSON.stringify({ query: ADD_BOOK }) },
    { name: 'no content type', headers: {}, body: JSON.stringify({ query: ADD_BOOK }) },
  ];
  const mutations = () => library.calls.filter((call) => call.query.includes('addBook')).length;

  for (const request of simple) {
    it(`refuses a ${request.name} POST with 400 CSRF_PREVENTED and runs nothing`, async () => {
      const before = mutations();
      const answer = await send(plain, { headers: { origin: 'https://evil.test', ...request.headers }, body: request.body });
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(answer.text) as { errors: Array<{ message: string; extensions: { code: string } }> };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.extensions).toEqual({ code: 'CSRF_PREVENTED' });
      expect(body.errors[0]!.message).toMatch(/graphql-preflight/);
      // In-process too.
      const inProcess = await plain.router.handle(new Request('http://router.test/graphql', { method: 'POST', headers: request.headers, body: request.body }));
      expect(inProcess.status).toBe(400);
      expect(mutations()).toBe(before);
    });
  }

  it('refuses them with an empty required header, and on a CORS router for an allowed origin too', async () => {
    const before = mutations();
    expect(code(await send(plain, { headers: { 'content-type': 'text/plain', 'graphql-preflight': '' }, body: JSON.stringify({ query: ADD_BOOK }) }))).toBe('CSRF_PREVENTED');
    const cors = await send(exact, { headers: { origin: 'https://app.example.com', 'content-type': 'text/plain' }, body: JSON.stringify({ query: ADD_BOOK }) });
    expect(code(cors)).toBe('CSRF_PREVENTED');
    expect(cors.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(mutations()).toBe(before);
  });

  for (const header of ['graphql-preflight', 'apollo-require-preflight', 'x-apollo-operation-name']) {
    it(`lets a form POST through with ${header}`, async () => {
      const before = mutations();
      const answer = await send(plain, { headers: { 'content-type': 'application/x-www-form-urlencoded', [header]: '1' }, body: `query=${encodeURIComponent(ADD_BOOK)}` });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ data: { addBook: { id: expect.any(String) } } });
      expect(mutations()).toBe(before + 1);
    });
  }

  it('leaves JSON POSTs and GET alone', async () => {
    const before = mutations();
    const answer = await json(plain, { query: ADD_BOOK }, { origin: 'https://evil.test' });
    expect(answer.status).toBe(200);
    expect(mutations()).toBe(before + 1);
    expect(JSON.parse((await get(plain, 'query=%7B__typename%7D')).text)).toEqual({ data: { __typename: 'Query' } });
    // A mutation over GET stays a 405, not a way around the check.
    expect((await get(plain, `query=${encodeURIComponent(ADD_BOOK)}`, STRICT)).status).toBe(405);
    expect(mutations()).toBe(before + 1);
  });

  it('follows csrf_prevention: off lets simple POSTs run, required_headers replaces the list', async () => {
    const before = mutations();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const body = `query=${encodeURIComponent(ADD_BOOK)}`;
    expect((await send(csrfOff, { headers: form, body })).status).toBe(200);
    expect(code(await send(customCsrf, { headers: { ...form, 'graphql-preflight': '1' }, body }))).toBe('CSRF_PREVENTED');
    expect((await send(customCsrf, { headers: { ...form, 'x-requested-by': 'app' }, body })).status).toBe(200);
    expect(mutations()).toBe(before + 2);
  });
});

describe('client input is a 400, never a 500', () => {
  const bad = async (answer: Answer | Promise<Answer>, expected = 'BAD_REQUEST', status = 400) => {
    const got = await answer;
    expect(got.status, got.text).toBe(status);
    expect(code(got), got.text).toBe(expected);
    return JSON.parse(got.text) as { errors: Array<{ message: string }> };
  };

  it('malformed variables or extensions JSON over GET, naming the parameter', async () => {
    expect((await bad(get(plain, 'query=%7B__typename%7D&variables=%7B'))).errors[0]!.message).toMatch(/"variables" parameter is not valid JSON/);
    expect((await bad(get(plain, 'query=%7B__typename%7D&extensions=%7B'))).errors[0]!.message).toMatch(/"extensions" parameter is not valid JSON/);
    await bad(get(plain, 'query=%7B__typename%7D&variables=%7B', { accept: 'application/json' }));
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'graphql-preflight': '1' };
    await bad(send(plain, { headers: form, body: 'query=%7B__typename%7D&variables=%7B' }));
    await bad(send(plain, { headers: form, body: 'query=%7B__typename%7D&extensions=nope' }));
  });

  it('variables and extensions of the wrong JSON type, over GET and POST', async () => {
    for (const value of ['[]', '1', '"x"', 'true']) {
      await bad(get(plain, `query=%7B__typename%7D&variables=${encodeURIComponent(value)}`));
      await bad(get(plain, `query=%7B__typename%7D&extensions=${encodeURIComponent(value)}`));
      await bad(json(plain, `{"query":"{ __typename }","variables":${value}}`));
      await bad(json(plain, `{"query":"{ __typename }","extensions":${value}}`));
    }
  });

  it('an operationName, documentId or doc_id of the wrong type', async () => {
    for (const value of [1, {}, [], true]) {
      expect((await bad(json(plain, { query: '{ __typename }', operationName: value }))).errors[0]!.message).toMatch(/operationName/);
      expect((await bad(json(plain, { documentId: value }))).errors[0]!.message).toMatch(/documentId/);
      expect((await bad(json(plain, { doc_id: value }))).errors[0]!.message).toMatch(/doc_id/);
      await bad(json(plain, { documentId: value, extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex('{ books { id } }') } } }));
    }
    await bad(json(plain, { documentId: '' }));
    await bad(get(plain, 'documentId='));
  });

  it('batches with junk entries answer each entry with a 400 error', async () => {
    const answer = await json(plain, [1, 'x', null, [], { query: 1 }, { query: '{ __typename }', operationName: 5 }, { query: '{ __typename }' }]);
    expect(answer.status).toBe(200);
    const entries = JSON.parse(answer.text) as Array<{ data?: unknown; errors?: Array<{ extensions?: { code?: string } }> }>;
    expect(entries.slice(0, 6).map((entry) => entry.errors?.[0]?.extensions?.code)).toEqual(Array(6).fill('BAD_REQUEST'));
    expect(entries[6]).toEqual({ data: { __typename: 'Query' } });
  });

  it('arbitrary GET parameters', async () => {
    const value = fc.oneof(fc.string({ maxLength: 40 }), fc.json({ maxDepth: 2 }), fc.constantFrom('{', '[', '"', 'null', '{"persistedQuery":{"version":1}}'));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom('query', 'variables', 'extensions', 'operationName', 'documentId', 'doc_id'), value, { maxKeys: 4 }), async (params) => {
        const answer = await get(plain, new URLSearchParams(params).toString(), STRICT);
        expect(answer.status, `${answer.status} for ${JSON.stringify(params)}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
      }),
      { numRuns: 100 },
    );
  });

  it('a multipart body whose operations are not JSON (with a preflight header)', async () => {
    const body = ['--x', 'Content-Disposition: form-data; name="operations"', '', '{"query":', '--x--', ''].join('\r\n');
    await bad(send(plain, { headers: { 'content-type': 'multipart/form-data; boundary=x', 'graphql-preflight': '1' }, body }));
  });

  it('a Host header no URL can hold, on every lane', async () => {
    for (const head of [
      'GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nHost: [\r\nConnection: close\r\n\r\n',
      'POST /graphql HTTP/1.1\r\nHost: [\r\nContent-Type: application/json\r\nContent-Length: 1\r\nConnection: close\r\n\r\n{',
      'POST /graphql HTTP/1.1\r\nHost: [\r\nContent-Type: application/json\r\nContent-Length: 24\r\nConnection: close\r\n\r\n{"query":"{__typename}"}',
    ]) {
      expect(await raw(plain, head)).toMatch(/^HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"/);
    }
  });

  it('documents nested deeper than the parser can follow', async () => {
    const depth = 50_000;
    // Refused by the pre-scan before graphql-js's recursive parser sees it.
    await bad(json(plain, { query: `{${'a{'.repeat(depth)}${'}'.repeat(depth + 1)}` }, STRICT), 'GRAPHQL_PARSE_FAILED');
    await bad(json(plain, { query: `{ book(id: ${'['.repeat(depth)}${']'.repeat(depth)}) { id } }` }, STRICT), 'GRAPHQL_PARSE_FAILED');
  });

  it('huge and odd headers', async () => {
    expect((await json(plain, { query: '{ __typename }' }, { 'x-switchyard-include-query-plan': 'true'.repeat(2_000), traceparent: 'zz-'.repeat(100) })).status).toBe(200);
    // Beyond Node's header size limit: 431 from the HTTP parser.
    expect((await json(plain, { query: '{ __typename }' }, { 'x-big': 'a'.repeat(20_000) })).status).toBe(431);
  });

  it('a client that leaves mid-body', async () => {
    const before = logs.lines.length;
    await raw(plain, 'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":', 200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(trouble(logs.lines.slice(before))).toEqual([]);
  });

  describe('persisted operation ids', () => {
    const web = { 'graphql-client-name': 'web' };
    const notFound = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };

    it('runs a pushed operation by documentId, over POST and GET', async () => {
      const id = sha256Hex('query Titles { book(id: "b1") { title } }');
      const titles = { data: { book: { title: 'Dune' } } };
      expect(JSON.parse((await json(plain, { documentId: id }, web)).text)).toEqual(titles);
      expect(JSON.parse((await get(plain, `documentId=sha256:${id}`, web)).text)).toEqual(titles);
    });

    it('answers ids and client names no push could have stored with 200 PERSISTED_QUERY_NOT_FOUND', async () => {
      const cases: Array<[unknown, Record<string, string>]> = [
        [{ documentId: 'a'.repeat(300) }, web],
        [{ doc_id: 'é'.repeat(100) }, web],
        [{ documentId: '../../registry' }, web],
        [{ documentId: 'a\u0000b' }, web],
        ['{"documentId":"\\ud800"}', web],
        [{ documentId: 'abc' }, { 'graphql-client-name': 'é'.repeat(150) }],
        [{ extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex('unknown') } } }, { 'graphql-client-name': 'x'.repeat(200) }],
      ];
      for (const [body, headers] of cases) {
        const answer = await json(plain, body, headers);
        expect([answer.status, JSON.parse(answer.text)], JSON.stringify(body).slice(0, 80)).toEqual([200, notFound]);
      }
      const longGet = await get(plain, `documentId=${'b'.repeat(300)}`, web);
      expect([longGet.status, JSON.parse(longGet.text)]).toEqual([200, notFound]);
    });

    it('answers a sha256Hash that is no SHA-256 with 400 PERSISTED_QUERY_INVALID_HASH', async () => {
      await bad(json(plain, { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(300) } } }, web), 'PERSISTED_QUERY_INVALID_HASH');
    });

    it('never reads the store for such an id', async () => {
      let reads = 0;
      const storage: OperationsStorage = {
        location: 'counting',
        writable: false,
        read: async () => {
          reads += 1;
          return undefined;
        },
        readIfChanged: async () => ({ status: 'missing' }),
        withLock: async (_graph, work) => work(),
        commit: async () => undefined,
        close: async () => undefined,
      };
      const source = new LookupSource({ store: new OperationsStore(storage), graph: 'default', cacheSize: 10, cacheTtlMs: 60_000 });
      for (const key of ['a'.repeat(241), 'é'.repeat(100), 'a\u0000b', '\ud800', '']) expect(await source.resolve('web', key)).toBeUndefined();
      expect(await source.resolve('é'.repeat(150), 'abc')).toBeUndefined();
      expect(reads).toBe(0);
      expect(await source.resolve('web', sha256Hex('x'))).toBeUndefined();
      expect(reads).toBe(1);
    });

    it('keeps found operations cached while a client sends many unknown ids', async () => {
      const known = sha256Hex('{ books { id } }');
      const reads: string[] = [];
      const storage: OperationsStorage = {
        location: 'counting',
        writable: false,
        read: async (path) => {
          reads.push(path);
          return path.endsWith(`${known}.json`) ? JSON.stringify({ version: 1, body: '{ books { id } }' }) : undefined;
        },
        readIfChanged: async () => ({ status: 'missing' }),
        withLock: async (_graph, work) => work(),
        commit: async () => undefined,
        close: async () => undefined,
      };
      const source = new LookupSource({ store: new OperationsStore(storage), graph: 'default', cacheSize: 10, cacheTtlMs: 60_000 });
      expect((await source.resolve('web', known))?.body).toBe('{ books { id } }');
      const readsForKnown = reads.length;
      // Ten times the cache's size in ids nobody pushed.
      for (let i = 0; i < 100; i++) expect(await source.resolve('web', sha256Hex(`unknown ${i}`))).toBeUndefined();
      reads.length = 0;
      expect((await source.resolve('web', known))?.body).toBe('{ books { id } }');
      expect(reads).toEqual([]);
      expect(readsForKnown).toBeGreaterThan(0);
    });
  });

  it('logged no error and no stack trace for any of it', () => {
    expect(trouble(logs.lines)).toEqual([]);
  });
});

describe('X-Switchyard-Include-Query-Plan follows query_plans.enabled', () => {
  const ask = (router: TestRouter) => json(router, { query: '{ book(id: "b1") { title } }' }, { 'x-switchyard-include-query-plan': 'true' });
  const planOf = async (router: TestRouter) => (JSON.parse((await ask(router)).text) as { extensions?: { queryPlan?: { kind: string } } }).extensions?.queryPlan;

  it('adds the plan by default (introspection on)', async () => {
    expect((await planOf(plain))?.kind).toBe('QueryPlan');
  });

  it('ignores the header while introspection is off', async () => {
    const answer = await ask(noIntrospection);
    expect(JSON.parse(answer.text)).toEqual({ data: { book: { title: 'Dune' } } });
    const get = await send(noIntrospection, {
      method: 'GET',
      path: `/graphql?query=${encodeURIComponent('{ books { id } }')}`,
      headers: { 'x-switchyard-include-query-plan': 'true' },
    });
    expect(get.text).not.toContain('queryPlan');
  });

  it('honours query_plans.enabled over introspection.enabled, either way', async () => {
    expect((await planOf(plansOn))?.kind).toBe('QueryPlan');
    expect(await planOf(plansOff)).toBeUndefined();
  });
});

describe('the playground', () => {
  it('may not be framed', async () => {
    const page = await send(plain, { method: 'GET', path: '/', headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers['x-frame-options']).toBe('DENY');
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
    // Merged into the policy it had: still only its own origin and scripts.
    expect(policy).toMatch(/^default-src 'self'; script-src 'self' 'sha256-/);
  });

  it('is never sniffed as another type, and its URL (which holds the operation) is not sent on as a referrer', async () => {
    const page = await send(plain, { method: 'GET', path: '/', headers: { accept: 'text/html' } });
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    // A 404 echoing the path it was asked for is JSON, and stays JSON.
    const missing = await send(plain, { method: 'GET', path: '/playground/%3Cimg%20src=x%3E', headers: { accept: 'text/html' } });
    expect(missing.status).toBe(404);
    expect(missing.headers['x-content-type-options']).toBe('nosniff');
  });
});
