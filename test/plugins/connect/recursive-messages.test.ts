import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create, toBinary, type DescMessage, type DescService } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { compressionBrotli, compressionGzip, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../../src/compose/index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { startSubgraph, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { bufBuild } from './buf.js';
import { connectPost, serveContracts, writeContract, type LogLine } from './fixtures.js';

/** A graph whose input type holds itself, and whose output type does too. */
const SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type Query {
    echo(input: EchoInput): String
    user(id: ID!): User
  }

  input EchoInput {
    a: Int
    b: [EchoInput!]
    s: String
    child: EchoInput
  }

  type User {
    id: ID!
    name: String!
    friend: User
  }
`;

const OPERATIONS = {
  'Echo.graphql': 'query Echo($input: EchoInput) { echo(input: $input) }',
  'GetUser.graphql': 'query GetUser($id: ID!) { user(id: $id) { id name friend { id name friend { id name } } } }',
};

/** The generated response message of GetUser, nested per selection, made recursive by hand as a proto author may write it. */
const RECURSIVE_USER = `message GetUserResponse {
  message User {
    string id = 1;
    string name = 2;
    User friend = 3;
  }
  User user = 1;
}
`;

const ECHO = '/recursive.v1.RecursiveService/Echo';
const GET_USER = '/recursive.v1.RecursiveService/GetUser';

let subgraph: TestSubgraph;
let router: TestRouter;
let services: string;
let connectUrl: string;
let service: DescService;
let lines: LogLine[];

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'recursive',
    typeDefs: SDL,
    resolvers: {
      Query: {
        echo: (_: unknown, { input }: { input: unknown }) => JSON.stringify(input),
        user: (_: unknown, { id }: { id: string }) => ({ id, name: `user ${id}`, friend: { id: `${id}+1`, name: 'friend', friend: { id: `${id}+2`, name: 'friend of friend' } } }),
      },
    },
  });
  const apiSchema = readSupergraph(composeSubgraphs([{ name: 'recursive', url: subgraph.url, sdl: SDL }]).supergraphSdl).apiSchema;
  services = await mkdtemp(join(tmpdir(), 'switchyard-connect-'));
  const dir = join(services, 'recursive', 'v1');
  await writeContract(dir, OPERATIONS, apiSchema);
  const protoPath = join(dir, 'contract.proto');
  const proto = await readFile(protoPath, 'utf8');
  await writeFile(protoPath, proto.replace(/message GetUserResponse \{[\s\S]*?\n\}\n/, RECURSIVE_USER));
  ({ router, connectUrl, lines } = await serveContracts([subgraph], services));
  service = (await bufBuild(services)).registry.getService('recursive.v1.RecursiveService')!;
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
  if (services) await rm(services, { recursive: true, force: true });
});

type Untyped = Record<string, (request: Record<string, unknown>) => Promise<Record<string, unknown>>>;

function clientOf(transport: Transport): Untyped {
  return createClient(service, transport) as Client<DescService> as unknown as Untyped;
}

const transports: Record<string, () => Transport> = {
  JSON: () => createConnectTransport({ baseUrl: connectUrl, httpVersion: '1.1' }),
  binary: () => createConnectTransport({ baseUrl: connectUrl, httpVersion: '1.1', useBinaryFormat: true }),
  'binary, gzip': () => createConnectTransport({ baseUrl: connectUrl, httpVersion: '1.1', useBinaryFormat: true, sendCompression: compressionGzip, compressMinBytes: 0 }),
  'JSON, br': () => createConnectTransport({ baseUrl: connectUrl, httpVersion: '1.1', sendCompression: compressionBrotli, compressMinBytes: 0 }),
  gRPC: () => createGrpcTransport({ baseUrl: connectUrl }),
  'gRPC, gzip': () => createGrpcTransport({ baseUrl: connectUrl, sendCompression: compressionGzip, compressMinBytes: 0 }),
  'gRPC-Web': () => createGrpcWebTransport({ baseUrl: connectUrl, httpVersion: '1.1' }),
  'gRPC-Web, JSON': () => createGrpcWebTransport({ baseUrl: connectUrl, httpVersion: '1.1', useBinaryFormat: false }),
};

/** `{child: {child: ... {s: 'bottom'}}}` with `levels` EchoInput messages. */
function nested(levels: number): Record<string, unknown> {
  let input: Record<string, unknown> = { s: 'bottom' };
  for (let level = 1; level < levels; level += 1) input = { child: input };
  return input;
}

/** The binary EchoRequest `{input: {child: {child: ...}}}` with `levels` EchoInput messages, written without recursion. */
function nestedBinary(levels: number): Uint8Array<ArrayBuffer> {
  const varint = (n: number): number[] => {
    const out: number[] = [];
    for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
    out.push(n);
    return out;
  };
  // Content length of each EchoInput, innermost first; each holds the next as field 4 (`child`).
  const lengths = [0];
  for (let level = 1; level < levels; level += 1) lengths.push(1 + varint(lengths[level - 1]!).length + lengths[level - 1]!);
  const bytes: number[] = [0x0a, ...varint(lengths[levels - 1]!)];
  for (let level = levels - 1; level > 0; level -= 1) bytes.push(0x22, ...varint(lengths[level - 1]!));
  return Uint8Array.from(bytes);
}

/** POSTs `message` as one gRPC-Web frame; returns the HTTP status and the status in the trailer frame. */
async function grpcWebPost(path: string, message: Uint8Array): Promise<{ status: number; grpcStatus: string | undefined; grpcMessage: string | undefined }> {
  const frame = new Uint8Array(5 + message.length);
  new DataView(frame.buffer).setUint32(1, message.length);
  frame.set(message, 5);
  const response = await fetch(`${connectUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' }, body: frame });
  const body = new Uint8Array(await response.arrayBuffer());
  // The trailer frame (flag 0x80) comes last: `name: value` lines.
  let trailer = '';
  for (let at = 0; at + 5 <= body.length; ) {
    const length = new DataView(body.buffer, body.byteOffset + at + 1, 4).getUint32(0);
    if (body[at]! & 0x80) trailer = new TextDecoder().decode(body.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  const field = (name: string) => trailer.match(new RegExp(`^${name}: ?(.*?)\r?$`, 'm'))?.[1];
  return { status: response.status, grpcStatus: field('grpc-status'), grpcMessage: field('grpc-message') };
}

function messageOf(name: string): DescMessage {
  return service.methods.find((m) => m.name === name)!.input;
}

describe('a recursive input type (a message that holds itself)', () => {
  it('is generated as one message that refers to itself, as protobuf allows', async () => {
    const proto = await readFile(join(services, 'recursive', 'v1', 'contract.proto'), 'utf8');
    expect(proto).toMatch(
      /message EchoInput \{\n {2}google\.protobuf\.Int32Value a = 1;\n {2}repeated EchoInput b = 2;\n {2}google\.protobuf\.StringValue s = 3;\n {2}EchoInput child = 4;\n\}/,
    );
  });

  it.each(Object.keys(transports))('round-trips a message several levels deep over %s', async (name) => {
    const client = clientOf(transports[name]!());
    const input = { a: 1, b: [{ a: 2, b: [{ a: 3, child: { s: 'deep' } }] }, { s: 'sibling' }], child: { child: { a: 4 } } };
    const answer = await client.echo!({ input });
    expect(JSON.parse(answer.echo as string)).toEqual(input);
  });

  it('accepts a message exactly 100 levels deep', async () => {
    // EchoRequest is level 1, so 99 EchoInput levels.
    const answer = await connectPost(connectUrl, ECHO, { input: nested(99) });
    expect(answer.status).toBe(200);
    let echoed = JSON.parse((answer.body as { echo: string }).echo) as Record<string, unknown>;
    for (let level = 1; level < 99; level += 1) echoed = echoed.child as Record<string, unknown>;
    expect(echoed).toEqual({ s: 'bottom' });
  });

  it('refuses a JSON message nested deeper than 100 levels with resource_exhausted (429)', async () => {
    const expected = { status: 429, body: { code: 'resource_exhausted', message: 'the EchoRequest message is nested more than 100 levels deep' } };
    const justOver = await connectPost(connectUrl, ECHO, { input: nested(100) });
    expect({ status: justOver.status, body: justOver.body }).toEqual(expected);
    // A hostile one, 50,000 levels in 450KB: refused the same way, without overflowing anything.
    const hostile = await connectPost(connectUrl, ECHO, `{"input":${'{"child":'.repeat(50_000)}{}${'}'.repeat(50_000)}}`);
    expect({ status: hostile.status, body: hostile.body }).toEqual(expected);
    const lists = await connectPost(connectUrl, ECHO, `{"input":{"b":${'['.repeat(50_000)}${']'.repeat(50_000)}}}`);
    expect({ status: lists.status, body: lists.body }).toEqual(expected);
  });

  it('refuses a binary message nested deeper than 100 levels with resource_exhausted, from a client too', async () => {
    for (const levels of [100, 50_000]) {
      const response = await fetch(`${connectUrl}${ECHO}`, {
        method: 'POST',
        headers: { 'content-type': 'application/proto', 'connect-protocol-version': '1' },
        body: nestedBinary(levels),
      });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 429,
        body: { code: 'resource_exhausted', message: 'the EchoRequest message is nested more than 100 levels deep' },
      });
    }
    // Over gRPC-Web too, a hostile depth included: 100 and 50,000 messages, or 150 unknown groups (field 9).
    const groups = Uint8Array.from([...Array(150).fill((9 << 3) | 3), ...Array(150).fill((9 << 3) | 4)]);
    for (const message of [nestedBinary(100), nestedBinary(50_000), groups]) {
      expect(await grpcWebPost(ECHO, message)).toEqual({
        status: 200,
        grpcStatus: '8',
        grpcMessage: encodeURIComponent('the EchoRequest message is nested more than 100 levels deep'),
      });
    }
    // A message that does not decode is the client's mistake there as well: field 1 (input) as a varint.
    expect(await grpcWebPost(ECHO, Uint8Array.from([0x08, 0x01]))).toMatchObject({ status: 200, grpcStatus: '3' });
    // The check reads the same bytes protobuf writes.
    expect(toBinary(messageOf('Echo'), create(messageOf('Echo'), { input: { child: { child: {} } } }))).toEqual(nestedBinary(3));
    for (const name of ['binary', 'binary, gzip', 'JSON, br', 'gRPC', 'gRPC, gzip', 'gRPC-Web', 'gRPC-Web, JSON']) {
      const error = await clientOf(transports[name]!()).echo!({ input: nested(150) }).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(ConnectError);
      expect({ name, code: (error as ConnectError).code }).toEqual({ name, code: Code.ResourceExhausted });
    }
  });

  it('refuses a compressed body that does not decompress, or decompresses beyond the body limit', async () => {
    const post = (body: Uint8Array<ArrayBuffer> | string) =>
      fetch(`${connectUrl}${ECHO}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'connect-protocol-version': '1' }, body });
    const garbled = await post('not gzip at all');
    expect({ status: garbled.status, code: ((await garbled.json()) as { code: string }).code }).toEqual({ status: 400, code: 'invalid_argument' });
    // 2MB of spaces compress to a few KB; decompressed they pass limits.max_request_body (1MB).
    const bomb = await post(Uint8Array.from(gzipSync(`{"input":{}}${' '.repeat(2 * 1024 * 1024)}`)));
    expect({ status: bomb.status, body: await bomb.json() }).toEqual({
      status: 429,
      body: { code: 'resource_exhausted', message: 'request body larger than 1000000 bytes (limits.max_request_body)' },
    });
  });
});

describe('a recursive output type', () => {
  it.each(Object.keys(transports))('answers the levels the operation selects over %s', async (name) => {
    const answer = await clientOf(transports[name]!()).getUser!({ id: 'u' });
    const plain = JSON.parse(JSON.stringify(answer, (key, value: unknown) => (key === '$typeName' ? undefined : value)));
    expect(plain).toEqual({ user: { id: 'u', name: 'user u', friend: { id: 'u+1', name: 'friend', friend: { id: 'u+2', name: 'friend of friend' } } } });
  });
});

describe('one operation does not take down the others', () => {
  it('serves every method after the graph loads, and logs no failed graph listener', async () => {
    expect((await connectPost(connectUrl, GET_USER, { id: 'x' })).status).toBe(200);
    expect((await connectPost(connectUrl, ECHO, { input: { a: 1 } })).status).toBe(200);
    expect(lines.filter((line) => /listener failed|cannot be served/.test(line.msg))).toEqual([]);
  });
});
