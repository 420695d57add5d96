import { fromBinary, toJson } from '@bufbuild/protobuf';
import { base64Decode } from '@bufbuild/protobuf/wire';
import { StructSchema } from '@bufbuild/protobuf/wkt';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGet, connectPost, getParams, serveProjects, type ServedProjects } from './fixtures.js';

let setup: ServedProjects;

beforeAll(async () => {
  setup = await serveProjects({ router: { config: { limits: { max_request_body: '1KB' } } } });
});

afterAll(async () => {
  await setup?.close();
});

const GET_PROJECT = '/projects.v1.ProjectsService/GetProject';
const CREATE = '/projects.v1.ProjectsService/CreateProject';

/** A gRPC-Web call with a JSON message (one envelope); its HTTP status, grpc-status and grpc-message (trailers-only answers carry them as headers). */
async function grpcWebJson(path: string, message: Buffer): Promise<{ status: number; grpcStatus: string | null; message: string | null }> {
  const envelope = Buffer.alloc(5);
  envelope.writeUInt32BE(message.length, 1);
  const answer = await fetch(`${setup.served.connectUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/grpc-web+json', 'x-grpc-web': '1' },
    body: Buffer.concat([envelope, message]),
  });
  // Trailers in the headers (a trailers-only answer), else in the body's trailer frame (flag 0x80).
  const trailers = new Map<string, string>([...answer.headers.entries()]);
  const body = Buffer.from(await answer.arrayBuffer());
  for (let at = 0; at + 5 <= body.length; ) {
    const length = body.readUInt32BE(at + 1);
    if ((body[at]! & 0x80) !== 0) {
      for (const line of body
        .subarray(at + 5, at + 5 + length)
        .toString('utf8')
        .split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) trailers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
    }
    at += 5 + length;
  }
  const grpcMessage = trailers.get('grpc-message');
  return { status: answer.status, grpcStatus: trailers.get('grpc-status') ?? null, message: grpcMessage === undefined ? null : decodeURIComponent(grpcMessage) };
}

function invalid(message: string) {
  return { status: 400, body: { code: 'invalid_argument', message } };
}

async function statusAndBody(promise: Promise<{ status: number; body: unknown }>) {
  const { status, body } = await promise;
  return { status, body };
}

describe('Connect errors', () => {
  it('answers an unknown method or service with 404 not_found', async () => {
    expect(await statusAndBody(connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/DeleteProject', {}))).toEqual({
      status: 404,
      body: { code: 'not_found', message: 'no RPC at /projects.v1.ProjectsService/DeleteProject; paths are /<package>.<Service>/<Method>' },
    });
    expect((await connectGet(setup.served.connectUrl, '/other.v1.OtherService/GetProject', getParams({}))).status).toBe(404);
  });

  it('refuses a mutation over GET with 405, Allow: POST and unimplemented, whatever the parameters', async () => {
    for (const params of [getParams({ input: { name: 'x' } }), {}]) {
      const answer = await connectGet(setup.served.connectUrl, CREATE, params);
      expect({ status: answer.status, allow: answer.headers.get('allow'), body: answer.body }).toEqual({
        status: 405,
        allow: 'POST',
        body: { code: 'unimplemented', message: 'CreateProject is a mutation: send it with POST' },
      });
    }
    expect(setup.graph.rows).toHaveLength(3);
  });

  it('answers other HTTP methods with 405 and the methods it allows', async () => {
    const put = await fetch(`${setup.served.connectUrl}${GET_PROJECT}`, { method: 'PUT', body: '{}' });
    expect({ status: put.status, allow: put.headers.get('allow'), body: await put.json() }).toEqual({
      status: 405,
      allow: 'GET, POST',
      body: { code: 'unimplemented', message: 'method PUT is not allowed; use GET or POST' },
    });
    const deleteMutation = await fetch(`${setup.served.connectUrl}${CREATE}`, { method: 'DELETE' });
    expect(deleteMutation.headers.get('allow')).toBe('POST');
  });

  it('requires connect, encoding and message on a GET', async () => {
    const { message } = getParams({ id: '1' });
    expect(await statusAndBody(connectGet(setup.served.connectUrl, GET_PROJECT, { encoding: 'json', message }))).toEqual(
      invalid('missing query parameter connect: a GET needs connect=v1, encoding=json and message=<URL-encoded JSON>'),
    );
    expect(await statusAndBody(connectGet(setup.served.connectUrl, GET_PROJECT, { connect: 'v1', message }))).toEqual(
      invalid('missing query parameter encoding: a GET needs connect=v1, encoding=json and message=<URL-encoded JSON>'),
    );
    expect(await statusAndBody(connectGet(setup.served.connectUrl, GET_PROJECT, { connect: 'v1' }))).toEqual(
      invalid('missing query parameters encoding, message: a GET needs connect=v1, encoding=json and message=<URL-encoded JSON>'),
    );
    expect(await statusAndBody(connectGet(setup.served.connectUrl, GET_PROJECT, { connect: 'v2', encoding: 'json', message }))).toEqual(
      invalid('query parameter connect must be v1, got "v2"'),
    );
    expect(await statusAndBody(connectGet(setup.served.connectUrl, GET_PROJECT, { connect: 'v1', encoding: 'xml', message }))).toEqual(
      invalid('query parameter encoding must be json or proto, got "xml"'),
    );
  });

  it('requires Connect-Protocol-Version: 1 on a POST', async () => {
    const missing = await fetch(`${setup.served.connectUrl}${GET_PROJECT}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"1"}' });
    expect({ status: missing.status, body: await missing.json() }).toEqual(invalid('missing header Connect-Protocol-Version: set it to 1'));
    expect(await statusAndBody(connectPost(setup.served.connectUrl, GET_PROJECT, { id: '1' }, { 'connect-protocol-version': '2' }))).toEqual(
      invalid('Connect-Protocol-Version must be 1, got "2"'),
    );
  });

  it('refuses a content type other than JSON, protobuf, gRPC and gRPC-Web', async () => {
    expect(await statusAndBody(connectPost(setup.served.connectUrl, GET_PROJECT, '{"id":"1"}', { 'content-type': 'text/plain' }))).toEqual(
      invalid('Content-Type must be application/json (or application/proto, or a gRPC / gRPC-Web type), got "text/plain"'),
    );
    expect(await statusAndBody(connectPost(setup.served.connectUrl, GET_PROJECT, '{"id":"1"}', { 'content-type': 'application/connect+json' }))).toEqual(
      invalid('Content-Type must be application/json (or application/proto, or a gRPC / gRPC-Web type), got "application/connect+json"'),
    );
  });

  it('refuses malformed JSON, a message that is not an object, unknown fields and values of the wrong type', async () => {
    const malformed = await connectPost(setup.served.connectUrl, GET_PROJECT, '{"id": ');
    expect({ status: malformed.status, code: (malformed.body as { code: string }).code }).toEqual({ status: 400, code: 'invalid_argument' });
    expect((malformed.body as { message: string }).message).toMatch(/^malformed JSON: /);
    expect(await statusAndBody(connectPost(setup.served.connectUrl, GET_PROJECT, '[1]'))).toEqual(invalid('the message must be a JSON object of the GetProjectRequest fields'));
    expect(await statusAndBody(connectPost(setup.served.connectUrl, GET_PROJECT, { id: '1', name: 'x' }))).toEqual(
      invalid('cannot decode message projects.v1.GetProjectRequest from JSON: key "name" is unknown'),
    );
    expect(await statusAndBody(connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', { first: 'ten' }))).toEqual(
      invalid('cannot decode field google.protobuf.Int32Value.value from JSON: expected number (int32), got "ten"'),
    );
    expect(await statusAndBody(connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', { status: 'DONE' }))).toEqual(
      invalid('cannot decode enum projects.v1.ProjectStatus from JSON: "DONE"'),
    );
    const badGet = await connectGet(setup.served.connectUrl, GET_PROJECT, { connect: 'v1', encoding: 'json', message: '{oops' });
    expect({ status: badGet.status, code: (badGet.body as { code: string }).code }).toEqual({ status: 400, code: 'invalid_argument' });
  });

  it('refuses a JSON message that is not UTF-8 instead of passing replacement characters on', async () => {
    const bytes = Buffer.concat([Buffer.from('{"id": "'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const answer = await fetch(`${setup.served.connectUrl}${GET_PROJECT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
      body: bytes,
    });
    expect({ status: answer.status, body: await answer.json() }).toEqual(invalid('the message is not valid UTF-8'));
    // gRPC-Web with JSON messages, decoded by connect-node: the same answer.
    const grpcWeb = await grpcWebJson(GET_PROJECT, bytes);
    expect([grpcWeb.status, grpcWeb.grpcStatus, grpcWeb.message]).toEqual([200, '3', 'the message is not valid UTF-8']);
  });

  it('refuses unknown fields on gRPC and gRPC-Web JSON messages as on Connect JSON (invalid_argument)', async () => {
    const answer = await grpcWebJson(GET_PROJECT, Buffer.from(JSON.stringify({ id: '1', name: 'x' })));
    expect([answer.status, answer.grpcStatus]).toEqual([200, '3']);
    expect(answer.message).toMatch(/key "name" is unknown/);
  });

  it('serves a request whose target is in absolute form (RFC 9112 §3.2.2), as proxies send it', async () => {
    const { port } = new URL(setup.served.connectUrl);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `http://127.0.0.1:${port}${GET_PROJECT}`,
          headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify({ id: '1' }));
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toHaveProperty('project');
  });

  it('refuses a binary message that does not decode, over POST and GET, with invalid_argument', async () => {
    // Field 1 announces 5 bytes and brings 2.
    const truncated = '\n\u0005ab';
    const post = await connectPost(setup.served.connectUrl, GET_PROJECT, truncated, { 'content-type': 'application/proto' });
    expect({ status: post.status, code: (post.body as { code: string }).code }).toEqual({ status: 400, code: 'invalid_argument' });
    expect((post.body as { message: string }).message).toMatch(/^malformed GetProjectRequest message: /);
    const get = await connectGet(setup.served.connectUrl, GET_PROJECT, { connect: 'v1', encoding: 'proto', base64: '1', message: Buffer.from(truncated).toString('base64url') });
    expect({ status: get.status, code: (get.body as { code: string }).code }).toEqual({ status: 400, code: 'invalid_argument' });
  });

  it('refuses a missing required input message with invalid_argument', async () => {
    expect(await statusAndBody(connectPost(setup.served.connectUrl, CREATE, {}))).toEqual(invalid('input: required'));
  });

  it('answers a body over limits.max_request_body with resource_exhausted (429)', async () => {
    const answer = await connectPost(setup.served.connectUrl, GET_PROJECT, { id: 'x'.repeat(2_000) });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 429,
      body: { code: 'resource_exhausted', message: 'request body larger than 1000 bytes (limits.max_request_body)' },
    });
  });

  it('fails with unknown, the first message and every GraphQL error in details when there is no data', async () => {
    const answer = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/Failing', {});
    const body = answer.body as { code: string; message: string; details: Array<{ type: string; value: string; debug: unknown }> };
    expect({ status: answer.status, code: body.code, message: body.message }).toEqual({ status: 500, code: 'unknown', message: 'the failing field always fails' });
    expect(body.details).toHaveLength(1);
    const detail = body.details[0]!;
    expect(detail.type).toBe('google.protobuf.Struct');
    // A subgraph error as subgraph_error_propagation's defaults forward it: message, path, extensions.code (none here).
    expect(detail.debug).toEqual({ message: 'the failing field always fails', path: ['failing'] });
    // `value` is the same error as a binary google.protobuf.Struct.
    expect(toJson(StructSchema, fromBinary(StructSchema, base64Decode(detail.value)))).toEqual(detail.debug);
  });

  it('fails partial data as Cosmo does: unknown (500), its message, the errors in details, data and errors in headers', async () => {
    const answer = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/GetProjectNote', { id: '1' });
    const body = answer.body as { code: string; message: string; details: Array<{ type: string; debug: unknown }> };
    expect({ status: answer.status, code: body.code, message: body.message }).toEqual({ status: 500, code: 'unknown', message: 'GraphQL partial success with errors' });
    expect(body.details.map((detail) => detail.debug)).toEqual([expect.objectContaining({ message: 'notes are unavailable', path: ['project', 'riskyNote'] })]);
    expect(answer.headers.get('error-classification')).toBe('PARTIAL');
    expect(JSON.parse(answer.headers.get('graphql-partial-data')!)).toEqual({ project: { id: '1', riskyNote: null } });
    expect(JSON.parse(answer.headers.get('graphql-errors')!)).toEqual(body.details.map((detail) => detail.debug));
  });

  it('marks a failure without data CRITICAL and sends no partial data', async () => {
    const answer = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/Failing', {});
    expect(answer.headers.get('error-classification')).toBe('CRITICAL');
    expect(answer.headers.get('graphql-partial-data')).toBeNull();
    expect(JSON.parse(answer.headers.get('graphql-errors')!)).toEqual([{ message: 'the failing field always fails', path: ['failing'] }]);
  });

  it('refuses a Connect-Timeout-Ms that is not a number', async () => {
    expect(await statusAndBody(connectPost(setup.served.connectUrl, GET_PROJECT, { id: '1' }, { 'connect-timeout-ms': 'soon' }))).toEqual(
      invalid('Connect-Timeout-Ms must be a whole number of milliseconds (at most 10 digits), got "soon"'),
    );
  });
});
