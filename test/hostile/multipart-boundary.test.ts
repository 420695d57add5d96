/**
 * The multipart part limit (1002: `operations`, `map` and 1000 files) holds
 * whatever the `Content-Type` says: the router reads the boundary from it
 * strictly (multipart-boundary.ts), counts the parts at that boundary and
 * parses the body with that boundary alone. A header whose boundary is in
 * doubt is a 400 before the body is parsed. Real HTTP against a router
 * listening on 127.0.0.1, in front of a real HTTP subgraph that counts the
 * calls it gets: a refused request runs nothing.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRouter, type TestRouter } from '../../src/testing/index.js';

const TYPE_DEFS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { ping: String! }
`;

/** More parts than the limit: each is ~50 bytes, so a body stays small. */
const TOO_MANY = 2_500;
const TOO_MANY_PARTS = { status: 413, message: 'A multipart request may have at most 1002 parts ("operations", "map" and the files).' };

let subgraph: Server;
let router: TestRouter;
/** Calls the subgraph answered since the last test began. */
let calls = 0;

beforeAll(async () => {
  subgraph = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { ping: 'pong' } }));
    });
  });
  await new Promise<void>((resolve) => subgraph.listen(0, '127.0.0.1', resolve));
  const subgraphUrl = `http://127.0.0.1:${(subgraph.address() as AddressInfo).port}/graphql`;
  router = await startTestRouter({ subgraphs: [{ name: 'ping', url: subgraphUrl, typeDefs: TYPE_DEFS }], listen: true });
});

afterAll(async () => {
  await router?.close();
  await new Promise((resolve) => subgraph?.close(resolve));
});

beforeEach(() => {
  calls = 0;
});

/** A GraphQL multipart body split at `--delimiter`: `operations` (`{ ping }`), an empty `map`, then `extra` small text parts. */
function body(delimiter: Buffer | string, extra: number): Buffer {
  const dash = Buffer.isBuffer(delimiter) ? delimiter : Buffer.from(delimiter, 'latin1');
  const part = (name: string, value: string) => Buffer.concat([dash, Buffer.from(`\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)]);
  const chunks: Buffer[] = [part('operations', JSON.stringify({ query: '{ ping }' })), part('map', '{}')];
  for (let i = 0; i < extra; i++) chunks.push(part(`f${i}`, 'x'));
  chunks.push(dash, Buffer.from('--\r\n'));
  return Buffer.concat(chunks);
}

/** A POST to the router's /graphql with `contentType` sent byte for byte (latin1), as a client may send it. */
function post(contentType: string, payload: Buffer): Promise<{ status: number; body: { data?: unknown; errors?: Array<{ message: string; extensions?: unknown }> } }> {
  const url = new URL(`${router.url}/graphql`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': contentType, 'content-length': payload.length, 'graphql-preflight': '1', accept: 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function expectTooManyParts(contentType: string, payload: Buffer): Promise<void> {
  const { status, body: answer } = await post(contentType, payload);
  expect({ status, message: answer.errors?.[0]?.message }).toEqual(TOO_MANY_PARTS);
  expect(answer.data).toBeUndefined();
  expect(calls).toBe(0);
}

async function expectUnusable(contentType: string, payload: Buffer, reason: string): Promise<void> {
  const { status, body: answer } = await post(contentType, payload);
  expect(status).toBe(400);
  expect(answer.errors).toEqual([
    {
      message: `Multipart Content-Type ${reason}: send "multipart/form-data; boundary=..." with one boundary of 1 to 70 characters (RFC 2046).`,
      extensions: { code: 'BAD_REQUEST' },
    },
  ]);
  expect(calls).toBe(0);
}

async function expectRuns(contentType: string, payload: Buffer): Promise<void> {
  const { status, body: answer } = await post(contentType, payload);
  expect({ status, answer }).toEqual({ status: 200, answer: { data: { ping: 'pong' } } });
  expect(calls).toBe(1);
  calls = 0;
}

describe('multipart boundary and the part limit', () => {
  it('runs a normal upload (a file the fetch API sends) and counts its parts', async () => {
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: '{ ping }' }));
    form.append('map', '{}');
    form.append('0', new File(['hello'], 'a.txt', { type: 'text/plain' }));
    const response = await fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'graphql-preflight': '1', accept: 'application/json' }, body: form });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { ping: 'pong' } });
    expect(calls).toBe(1);
  });

  it('counts at the real boundary when another parameter quotes a fake one (probe: foo="; boundary=zzz"; boundary=b)', async () => {
    await expectTooManyParts('multipart/form-data; foo="; boundary=zzz"; boundary=b', body('--b', TOO_MANY));
    await expectRuns('multipart/form-data; foo="; boundary=zzz"; boundary=b', body('--b', 3));
  });

  it('refuses a quoted boundary longer than 70 characters (probe), and an unquoted one', async () => {
    const long = 'b'.repeat(71);
    await expectUnusable(`multipart/form-data; boundary="${long}"`, body(`--${long}`, TOO_MANY), 'has a boundary longer than 70 characters');
    await expectUnusable(`multipart/form-data; boundary=${long}`, body(`--${long}`, 3), 'has a boundary longer than 70 characters');
    const longest = 'b'.repeat(70);
    await expectTooManyParts(`multipart/form-data; boundary="${longest}"`, body(`--${longest}`, TOO_MANY));
    await expectRuns(`multipart/form-data; boundary="${longest}"`, body(`--${longest}`, 3));
  });

  it('reads the parameter name in any case (BOUNDARY=)', async () => {
    await expectTooManyParts('Multipart/Form-Data; BOUNDARY=b', body('--b', TOO_MANY));
    await expectRuns('Multipart/Form-Data; BOUNDARY=b', body('--b', 3));
  });

  it('refuses whitespace around the "=" of the boundary', async () => {
    await expectUnusable('multipart/form-data; boundary= b', body('-- b', TOO_MANY), 'has whitespace after the "=" of its boundary');
    await expectUnusable('multipart/form-data; boundary =b', body('--b', TOO_MANY), 'has whitespace before the "=" of its boundary');
  });

  it('refuses a duplicate boundary parameter, whichever one the body uses', async () => {
    await expectUnusable('multipart/form-data; boundary=a; boundary=b', body('--b', TOO_MANY), 'has more than one boundary parameter');
    await expectUnusable('multipart/form-data; boundary=a; Boundary="b"', body('--a', TOO_MANY), 'has more than one boundary parameter');
  });

  it('refuses an empty or missing boundary', async () => {
    await expectUnusable('multipart/form-data; boundary=', body('--', TOO_MANY), 'has an empty boundary');
    await expectUnusable('multipart/form-data; boundary=""', body('--', TOO_MANY), 'has an empty boundary');
    await expectUnusable('multipart/form-data; boundary', body('--', 3), 'has a boundary parameter without a value');
    await expectUnusable('multipart/form-data', body('--b', 3), 'has no boundary parameter');
  });

  it('refuses quoted-string edge cases: backslash escapes, an unterminated quote, text after the closing quote', async () => {
    await expectUnusable('multipart/form-data; boundary="a\\b"', body('--ab', TOO_MANY), 'has a backslash escape in its boundary');
    await expectUnusable('multipart/form-data; boundary="a\\"b"', body('--a"b', TOO_MANY), 'has a backslash escape in its boundary');
    await expectUnusable('multipart/form-data; boundary="ab', body('--ab', TOO_MANY), 'has an unterminated quoted parameter value');
    await expectUnusable('multipart/form-data; boundary="a"b', body('--a', TOO_MANY), 'has text after a quoted parameter value');
  });

  it('refuses a list of media types (the fetch API takes the last one)', async () => {
    await expectUnusable('multipart/form-data; boundary=a, multipart/form-data; boundary=b', body('--b', TOO_MANY), 'is a list of media types');
  });

  it('refuses characters RFC 2046 does not allow in a boundary (a non-ASCII one the parser would encode as UTF-8)', async () => {
    await expectUnusable('multipart/form-data; boundary=\u00e9', body(Buffer.from('--\u00e9', 'utf8'), TOO_MANY), 'has a boundary with characters RFC 2046 does not allow');
    await expectUnusable('multipart/form-data; boundary=a"b', body('--a"b', 3), 'has a boundary with characters RFC 2046 does not allow');
  });

  it('takes a quoted boundary with a space, a comma and a semicolon in another parameter', async () => {
    await expectTooManyParts('multipart/form-data; foo="x;y"; boundary="a b,c"', body('--a b,c', TOO_MANY));
    await expectRuns('multipart/form-data; foo="x;y"; boundary="a b,c"', body('--a b,c', 3));
  });
});
