/**
 * Values a proto type holds but a GraphQL scalar does not (NaN in a
 * double, an int64 past Int's 32 bits, a string that names no enum value)
 * are the client's `invalid_argument`, never a 5xx; and a hand-edited
 * contract whose field types cannot carry the graph's types is refused
 * when it is bound to the graph, naming the field, instead of writing
 * answers that are not proto3 JSON.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, type DescService } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../../src/compose/index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { startSubgraph, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { bufBuild } from './buf.js';
import { connectPost, serveContracts, writeContract, type LogLine } from './fixtures.js';

const SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  scalar JSON

  enum Size {
    SMALL
    LARGE
  }

  type Query {
    measure(ratio: Float!, count: Int, size: Size): String
    item(id: ID!): Item
    note(data: JSON): String
  }

  type Item {
    id: ID!
    weight: Float
  }
`;

const OPERATIONS = {
  'Measure.graphql': 'query Measure($ratio: Float!, $count: Int, $size: Size) { measure(ratio: $ratio, count: $count, size: $size) }',
  'GetItem.graphql': 'query GetItem($id: ID!) { item(id: $id) { id weight } }',
  'Note.graphql': 'query Note($data: JSON) { note(data: $data) }',
};

const MEASURE = '/scalars.v1.ScalarsService/Measure';
const GET_ITEM = '/scalars.v1.ScalarsService/GetItem';
const NOTE = '/scalars.v1.ScalarsService/Note';

let subgraph: TestSubgraph;
let router: TestRouter;
let services: string;
let connectUrl: string;
let lines: LogLine[];
let generatedProto: string;
const seen: unknown[] = [];

/** Rewrites one field declaration of the generated proto, as a contract author might. */
function editField(proto: string, message: string, from: RegExp, to: string): string {
  const start = proto.indexOf(`message ${message} {`);
  expect(start, `message ${message} in the generated proto`).toBeGreaterThanOrEqual(0);
  const end = proto.indexOf('\n}', start);
  const body = proto.slice(start, end);
  expect(body, `${String(from)} in ${message}`).toMatch(from);
  return proto.slice(0, start) + body.replace(from, to) + proto.slice(end);
}

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'scalars',
    typeDefs: SDL,
    resolvers: {
      Query: {
        measure: (_: unknown, args: Record<string, unknown>) => {
          seen.push(args);
          return JSON.stringify(args);
        },
        item: (_: unknown, { id }: { id: string }) => ({ id: `item-${id}`, weight: 2.5 }),
        note: () => 'noted',
      },
    },
  });
  const apiSchema = readSupergraph(composeSubgraphs([{ name: 'scalars', url: subgraph.url, sdl: SDL }]).supergraphSdl).apiSchema;
  services = await mkdtemp(join(tmpdir(), 'switchyard-connect-'));
  const dir = join(services, 'scalars', 'v1');
  await writeContract(dir, OPERATIONS, apiSchema);
  const protoPath = join(dir, 'contract.proto');
  generatedProto = await readFile(protoPath, 'utf8');
  // Hand edits: Int widened to int64 (fits), the enum as its name in a string (fits), ID as uint64 (cannot carry "item-1"), JSON as bytes (cannot carry a JSON value).
  let proto = editField(generatedProto, 'MeasureRequest', /google\.protobuf\.Int32Value count/, 'google.protobuf.Int64Value count');
  proto = editField(proto, 'MeasureRequest', /Size size/, 'string size');
  proto = editField(proto, 'Item', /string id/, 'uint64 id');
  proto = editField(proto, 'NoteRequest', /string data/, 'bytes data');
  await writeFile(protoPath, proto);
  ({ router, connectUrl, lines } = await serveContracts([subgraph], services));
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
  if (services) await rm(services, { recursive: true, force: true });
});

describe('values a proto type holds and GraphQL does not', () => {
  it('refuses NaN and the infinities in a double with invalid_argument, before the subgraph sees them', async () => {
    seen.length = 0;
    for (const ratio of ['NaN', 'Infinity', '-Infinity']) {
      const answer = await connectPost(connectUrl, MEASURE, { ratio });
      expect({ status: answer.status, body: answer.body }, ratio).toEqual({
        status: 400,
        body: { code: 'invalid_argument', message: `ratio: ${ratio} is not a number GraphQL can carry` },
      });
    }
    expect(seen).toEqual([]);
    const fine = await connectPost(connectUrl, MEASURE, { ratio: 0.5 });
    expect(fine.status).toBe(200);
    expect(seen).toEqual([{ ratio: 0.5 }]);
  });

  it('refuses NaN sent by a gRPC client in protobuf binary with status invalid_argument', async () => {
    const service = (await bufBuild(services)).registry.getService('scalars.v1.ScalarsService') as DescService;
    const client = createClient(service, createGrpcTransport({ baseUrl: connectUrl })) as Client<DescService> as unknown as Record<string, (m: unknown) => Promise<unknown>>;
    const error = await client.measure!(create(service.method.measure!.input, { ratio: Number.NaN })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect({ code: (error as ConnectError).code, message: (error as ConnectError).rawMessage }).toEqual({
      code: Code.InvalidArgument,
      message: 'ratio: NaN is not a number GraphQL can carry',
    });
  });

  it('takes an int64 where the graph has Int while it fits in 32 bits, and refuses one beyond with invalid_argument', async () => {
    seen.length = 0;
    const fits = await connectPost(connectUrl, MEASURE, { ratio: 1, count: '2147483647' });
    expect(fits.status).toBe(200);
    expect(seen).toEqual([{ ratio: 1, count: 2147483647 }]);
    for (const count of ['2147483648', '-2147483649', '9223372036854775807']) {
      const answer = await connectPost(connectUrl, MEASURE, { ratio: 1, count });
      expect({ status: answer.status, body: answer.body }, count).toEqual({
        status: 400,
        body: { code: 'invalid_argument', message: `count: ${count} is outside GraphQL Int's 32-bit range` },
      });
    }
  });

  it('answers a value the graph refuses (BAD_USER_INPUT: a string naming no enum value) with invalid_argument, not a 5xx', async () => {
    const ok = await connectPost(connectUrl, MEASURE, { ratio: 1, size: 'LARGE' });
    expect(ok.status).toBe(200);
    const answer = await connectPost(connectUrl, MEASURE, { ratio: 1, size: 'HUGE' });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('"HUGE"') });
  });
});

describe('a hand-edited contract whose types cannot carry the graph types', () => {
  it('refuses the method when bound, naming the field and both types, and serves the others', async () => {
    const item = await connectPost(connectUrl, GET_ITEM, { id: '1' });
    expect(item.status).toBe(500);
    expect(item.body).toMatchObject({ code: 'internal', message: expect.stringContaining('the proto has uint64 where the graph has ID, which only string can carry') });
    const note = await connectPost(connectUrl, NOTE, { data: 'e30=' });
    expect(note.status).toBe(500);
    expect(note.body).toMatchObject({ code: 'internal', message: expect.stringContaining('the proto has bytes where the graph has JSON') });
    const problems = lines.filter((line) => (line.level === 'warn' || line.level === 'error') && /GetItem|Note/.test(JSON.stringify(line))).map((line) => JSON.stringify(line));
    expect(problems.some((line) => line.includes('uint64'))).toBe(true);
    expect((await connectPost(connectUrl, MEASURE, { ratio: 2 })).status).toBe(200);
  });

  it('binds the contract as generated: every method runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-connect-'));
    try {
      await writeFile(join(dir, 'unused'), '');
      const generated = join(dir, 'scalars', 'v1');
      await writeContract(generated, OPERATIONS, readSupergraph(composeSubgraphs([{ name: 'scalars', url: subgraph.url, sdl: SDL }]).supergraphSdl).apiSchema);
      expect(await readFile(join(generated, 'contract.proto'), 'utf8')).toBe(generatedProto);
      const { router: other, connectUrl: base } = await serveContracts([subgraph], dir);
      try {
        expect(await connectPost(base, GET_ITEM, { id: '1' })).toMatchObject({ status: 200, body: { item: { id: 'item-1', weight: 2.5 } } });
        expect(await connectPost(base, NOTE, { data: '{"a":1}' })).toMatchObject({ status: 200, body: { note: 'noted' } });
        expect(await connectPost(base, MEASURE, { ratio: 1, count: 3, size: 'SIZE_LARGE' })).toMatchObject({ status: 200 });
      } finally {
        await other.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
