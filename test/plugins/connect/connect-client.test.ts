import type { DescService } from '@bufbuild/protobuf';
import { StructSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufBuild } from './buf.js';
import { serveProjects, type ServedProjects } from './fixtures.js';

let setup: ServedProjects;
let service: DescService;

beforeAll(async () => {
  setup = await serveProjects();
  // The client works from buf's compilation of the contract, as generated client code would.
  service = (await bufBuild(setup.services)).registry.getService('projects.v1.ProjectsService')!;
});

afterAll(async () => {
  await setup?.close();
});

const transports: Record<string, () => Transport> = {
  'Connect, JSON, HTTP/1.1': () => createConnectTransport({ baseUrl: setup.served.connectUrl, httpVersion: '1.1' }),
  'Connect, binary, HTTP/2': () => createConnectTransport({ baseUrl: setup.served.connectUrl, httpVersion: '2', useBinaryFormat: true }),
  'Connect, JSON, GET for queries': () => createConnectTransport({ baseUrl: setup.served.connectUrl, httpVersion: '1.1', useHttpGet: true }),
  'Connect, binary, GET for queries': () => createConnectTransport({ baseUrl: setup.served.connectUrl, httpVersion: '1.1', useHttpGet: true, useBinaryFormat: true }),
  gRPC: () => createGrpcTransport({ baseUrl: setup.served.connectUrl }),
  'gRPC-Web, HTTP/1.1': () => createGrpcWebTransport({ baseUrl: setup.served.connectUrl, httpVersion: '1.1' }),
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
    const before = setup.graph.rows.length;
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
    expect(details).toEqual([{ fields: expect.objectContaining({ message: { kind: { case: 'stringValue', value: 'the failing field always fails' } } }) }]);
  });

  it('gets a ConnectError for partial data, as Cosmo answers it, with the data and the errors in its metadata', async () => {
    const client = clientOf(transport());
    const error = await client.getProjectNote!({ id: '1' }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ConnectError);
    const connectError = error as ConnectError;
    expect({ code: connectError.code, message: connectError.rawMessage }).toEqual({ code: Code.Unknown, message: 'GraphQL partial success with errors' });
    expect(connectError.metadata.get('error-classification')).toBe('PARTIAL');
    expect(JSON.parse(connectError.metadata.get('graphql-partial-data')!)).toEqual({ project: { id: '1', riskyNote: null } });
    expect(JSON.parse(connectError.metadata.get('graphql-errors')!)).toEqual([expect.objectContaining({ message: 'notes are unavailable', path: ['project', 'riskyNote'] })]);
    expect(connectError.findDetails(StructSchema)).toHaveLength(1);
  });
});
