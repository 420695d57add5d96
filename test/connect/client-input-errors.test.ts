/**
 * Client mistakes in a Connect GET's message (base64, compression, binary
 * encoding) and in a JSON body's charset are the client's errors
 * (`invalid_argument`, or 415 for a charset), never `internal`, over real
 * HTTP against the Connect listener.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogs, connectPost, serveProjects, type LogLine, type ServedProjects } from '../plugins/connect/fixtures.js';

const GET_PROJECT = '/projects.v1.ProjectsService/GetProject';
/** GetProjectRequest {id: "1"} in protobuf's binary form (field 1, a string). */
const PROTO_ID_1 = Buffer.from([0x0a, 0x01, 0x31]);
const JSON_ID_1 = Buffer.from(JSON.stringify({ id: '1' }));

let setup: ServedProjects;
let logs: { lines: LogLine[] };

beforeAll(async () => {
  const captured = captureLogs();
  logs = captured;
  setup = await serveProjects({ router: { logger: captured.logger, config: { limits: { max_request_body: '1KB' } } } });
});

afterAll(async () => {
  await setup?.close();
});

/** A GET with the query written as it is (no re-encoding), its status and JSON body. */
async function rawGet(query: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(`${setup.served.connectUrl}${GET_PROJECT}?connect=v1&${query}`);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, headers: response.headers };
}

function failedCalls(): LogLine[] {
  return logs.lines.filter((line) => line.msg === 'Connect call failed');
}

const NOT_BASE64 = {
  status: 400,
  body: { code: 'invalid_argument', message: 'query parameter message is not base64: base64=1 needs base64url or standard base64, with or without padding' },
};

describe('a Connect GET message that does not decode', () => {
  it('refuses a JSON message that is not base64 with invalid_argument, and logs no failure', async () => {
    for (const message of ['%25%25%25%25', '!!!!', 'e', 'e30=e30', 'e3%200', 'e30===']) {
      const answer = await rawGet(`encoding=json&base64=1&message=${message}`);
      expect({ status: answer.status, body: answer.body }, message).toEqual(NOT_BASE64);
    }
    expect(failedCalls()).toEqual([]);
  });

  it('reads base64 in either alphabet, with or without padding', async () => {
    const padded = JSON_ID_1.toString('base64');
    expect(padded).toMatch(/=$/);
    for (const message of [padded, encodeURIComponent(padded), padded.replace(/=+$/, '')]) {
      const answer = await rawGet(`encoding=json&base64=1&message=${message}`);
      expect({ status: answer.status, id: (answer.body as { project?: { id?: string } }).project?.id }, message).toEqual({ status: 200, id: '1' });
    }
    // `{"id":"~~~"}`: `-` in base64url, `+` in standard base64 (percent-encoded, or it reads as a space). No such project: 200 and no `project`.
    const tildes = Buffer.from('{"id":"~~~"}');
    expect([tildes.toString('base64url'), tildes.toString('base64')]).toEqual(['eyJpZCI6In5-fiJ9', 'eyJpZCI6In5+fiJ9']);
    for (const message of [tildes.toString('base64url'), encodeURIComponent(tildes.toString('base64'))]) {
      const answer = await rawGet(`encoding=json&base64=1&message=${message}`);
      expect({ status: answer.status, body: answer.body }, message).toEqual({ status: 200, body: {} });
    }
    // GetProjectRequest {id: "11"}: four bytes, so padded `==`.
    for (const message of ['CgIxMQ==', 'CgIxMQ%3D%3D', 'CgIxMQ']) {
      const answer = await rawGet(`encoding=proto&base64=1&message=${message}`);
      expect({ status: answer.status, contentType: answer.headers.get('content-type') }, message).toEqual({ status: 200, contentType: 'application/proto' });
    }
  });

  it('refuses a binary message that is not base64 without running the operation', async () => {
    setup.graph.projects.reset();
    for (const message of ['!!!!', 'CgEx!', 'CgEx=', 'C']) {
      const answer = await rawGet(`encoding=proto&base64=1&message=${message}`);
      expect({ status: answer.status, body: answer.body }, message).toEqual(NOT_BASE64);
    }
    expect(setup.graph.projects.calls).toEqual([]);
  });

  it('reads a binary message sent percent-encoded without base64, and refuses one that does not decode', async () => {
    const ok = await rawGet(`encoding=proto&message=${[...PROTO_ID_1].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}`);
    expect({ status: ok.status, contentType: ok.headers.get('content-type') }).toEqual({ status: 200, contentType: 'application/proto' });
    const bad = await rawGet('encoding=proto&message=%FF%FF');
    expect({ status: bad.status, code: (bad.body as { code?: string }).code }).toEqual({ status: 400, code: 'invalid_argument' });
    expect(failedCalls()).toEqual([]);
  });

  it.each(['gzip', 'br'])('refuses a %s message that does not decompress with invalid_argument, JSON or binary', async (compression) => {
    for (const encoding of ['json', 'proto']) {
      for (const message of ['AAAA', 'bm90Y29tcHJlc3NlZA']) {
        const answer = await rawGet(`encoding=${encoding}&compression=${compression}&base64=1&message=${message}`);
        expect({ status: answer.status, code: (answer.body as { code?: string }).code }, `${encoding} ${message}`).toEqual({ status: 400, code: 'invalid_argument' });
        expect((answer.body as { message: string }).message).toMatch(new RegExp(`^the message does not decompress as ${compression}: `));
      }
    }
    expect(failedCalls()).toEqual([]);
  });

  it('reads gzip and br messages, and bounds them by limits.max_request_body once decompressed', async () => {
    const compress = { gzip: gzipSync, br: brotliCompressSync };
    for (const [name, fn] of Object.entries(compress)) {
      for (const [encoding, bytes] of [
        ['json', JSON_ID_1],
        ['proto', PROTO_ID_1],
      ] as const) {
        const answer = await rawGet(`encoding=${encoding}&compression=${name}&base64=1&message=${fn(bytes).toString('base64url')}`);
        expect(answer.status, `${name} ${encoding}`).toBe(200);
      }
      const large = fn(Buffer.from(`{"id":"${'1'.repeat(5000)}"}`)).toString('base64url');
      const tooLarge = await rawGet(`encoding=json&compression=${name}&base64=1&message=${large}`);
      expect({ status: tooLarge.status, code: (tooLarge.body as { code?: string }).code }).toEqual({ status: 429, code: 'resource_exhausted' });
    }
  });

  it('answers a compression it does not offer with unimplemented, and takes identity or none as uncompressed', async () => {
    const message = encodeURIComponent('{"id":"1"}');
    const zstd = await rawGet(`encoding=json&compression=zstd&message=${message}`);
    expect({ status: zstd.status, body: zstd.body }).toEqual({
      status: 501,
      body: { code: 'unimplemented', message: 'unknown compression "zstd": supported encodings are gzip, br' },
    });
    for (const compression of ['identity', '']) expect((await rawGet(`encoding=json&compression=${compression}&message=${message}`)).status).toBe(200);
  });
});

describe('a JSON body in a charset other than UTF-8', () => {
  it('is refused with 415 before the operation runs', async () => {
    setup.graph.projects.reset();
    for (const charset of ['latin1', 'ISO-8859-1', '"utf-16"', 'utf-16']) {
      const answer = await fetch(`${setup.served.connectUrl}${GET_PROJECT}`, {
        method: 'POST',
        headers: { 'content-type': `application/json; charset=${charset}`, 'connect-protocol-version': '1' },
        body: Buffer.from('{"id":"caf\u00e9"}', 'latin1'),
      });
      expect({ status: answer.status, body: await answer.json() }, charset).toEqual({
        status: 415,
        body: { code: 'invalid_argument', message: `Content-Type application/json must be UTF-8, got charset "${charset.replace(/"/g, '')}"` },
      });
    }
    expect(setup.graph.projects.calls).toEqual([]);
  });

  it('is served in UTF-8, however the charset is written', async () => {
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
      const answer = await connectPost(setup.served.connectUrl, GET_PROJECT, { id: '1' }, { 'content-type': `application/json; charset=${charset}` });
      expect(answer.status, charset).toBe(200);
    }
  });
});
