import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DescService } from '@bufbuild/protobuf';
import { StructSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufBuild } from './buf.js';
import { PROJECT_OPERATIONS, startConnectRouter, startProjectsGraph, writeContract, type ConnectRouter, type ProjectsGraph } from './fixtures.js';

let graph: ProjectsGraph;
let served: ConnectRouter;
let root: string;
let service: DescService;

beforeAll(async () => {
  graph = await startProjectsGraph();
  root = await mkdtemp(join(tmpdir(), 'switchyard-connect-'));
  const services = join(root, 'services');
  await writeContract(join(services, 'projects', 'v1'), PROJECT_OPERATIONS, graph.apiSchema);
  // The client works from buf's compilation of the contract, as generated client code would.
  service = (await bufBuild(services)).registry.getService('projects.v1.ProjectsService')!;
  served = await startConnectRouter(graph, services);
});

afterAll(async () => {
  await served?.close();
  await graph?.close();
  await rm(root, { recursive: true, force: true });
});

const transports: Record<string, () => Transport> = {
  'Connect, JSON, HTTP/1.1': () => createConnectTransport({ baseUrl: served.connectUrl, httpVersion: '1.1' }),
  'Connect, binary, HTTP/2': () => createConnectTransport({ baseUrl: served.connectUrl, httpVersion: '2', useBinaryFormat: true }),
  'Connect, JSON, GET for queries': () => createConnectTransport({ baseUrl: served.connectUrl, httpVersion: '1.1', useHttpGet: true }),
  'Connect, binary, GET for queries': () => createConnectTransport({ baseUrl: served.connectUrl, httpVersion: '1.1', useHttpGet: true, useBinaryFormat: true }),
  gRPC: () => createGrpcTransport({ baseUrl: served.connectUrl }),
  'gRPC-Web, HTTP/1.1': () => createGrpcWebTransport({ baseUrl: served.connectUrl, httpVersion: '1.1' }),
};

type Untyped = Record<string, (request: Record<string, unknown>, options?: { onHeader?: (headers: Headers) => void }) => Promise<Record<string, unknown>>>;

function clientOf(transport: Transport): Untyped {
  return createClient(service, transport) as Client<DescService> as unknown as Untyped;
}

/** A response message as plain data (no `$typeName`). */
function plain(message: unknown): unknown {
  return JSON.parse(JSON.stringify(message, (key, value: unknown) => (key === '$typeName' ? undefined : value)));
}

describe.each(Object.entries(transports))('a @connectrpc/connect-node client over %s', (_name, transport) => {
  it('calls a query and gets the typed response message', async () => {
    const client = clientOf(transport());
    const answer = await client.getProject!({ id: '1' });
    expect(plain(answer)).toEqual({
      project: {
        id: '1',
        name: 'Switchyard',
        status: 1,
        tags: ['router', 'graphql'],
        description: 'A router',
        score: 4.5,
        dueAt: '2030-01-01',
        owner: { id: 'u1', name: 'Ada' },
      },
    });
    expect(plain(await client.listProjects!({ status: 3 }))).toEqual({ projects: [{ id: '3', name: 'Paused', status: 3 }] });
  });

  it('calls a mutation', async () => {
    const client = clientOf(transport());
    const before = graph.rows.length;
    const answer = await client.createProject!({ input: { name: 'From a client', tags: ['x'], status: 2 } });
    expect(plain(answer)).toEqual({ createProject: { id: String(before + 1), name: 'From a client', status: 2, tags: ['x'], dueAt: '' } });
  });

  it('gets a ConnectError with code unknown and the GraphQL errors as Struct details', async () => {
    const client = clientOf(transport());
    const error = await client.failing!({}).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ConnectError);
    const connectError = error as ConnectError;
    expect({ code: connectError.code, message: connectError.rawMessage }).toEqual({ code: Code.Unknown, message: 'the failing field always fails' });
    const details = connectError.findDetails(StructSchema).map((detail) => plain(detail));
    expect(details).toEqual([
      { fields: expect.objectContaining({ message: { kind: { case: 'stringValue', value: 'the failing field always fails' } } }) },
    ]);
  });

  it('gets the partial message and the GraphQL errors header', async () => {
    const client = clientOf(transport());
    let errors: string | null = null;
    const answer = await client.getProjectNote!({ id: '1' }, { onHeader: (headers) => (errors = headers.get('switchyard-graphql-errors')) });
    expect(plain(answer)).toEqual({ project: { id: '1' } });
    expect(JSON.parse(errors!)).toEqual([expect.objectContaining({ message: 'notes are unavailable', path: ['project', 'riskyNote'] })]);
  });
});
