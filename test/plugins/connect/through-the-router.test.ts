import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { definePlugin, z } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { useConnect } from '../../../plugins/connect/index.js';
import { connectGet, connectPost, freePort, getParams, serveProjects, writeContract, type ServedProjects } from './fixtures.js';
import { composeSubgraphs } from '../../../src/compose/index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';

let setup: ServedProjects;
const seen: Array<{ origin: string; method: string; operationName: string | undefined }> = [];

/** Records what the request stage sees, as any plugin would. */
const useRecorder = definePlugin({
  name: 'recorder',
  options: z.strictObject({}),
  setup: () => ({
    hooks: {
      onRequest(event) {
        seen.push({ origin: event.input.origin, method: event.input.method, operationName: event.input.operationName });
      },
    },
  }),
});

beforeAll(async () => {
  setup = await serveProjects({
    graph: { projectsCacheControl: 'public, max-age=60' },
    router: {
      plugins: [useRecorder(), useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } })],
      config: { headers: { all: { request: [{ op: 'propagate', named: 'authorization' }] } } },
    },
  });
});

afterAll(async () => {
  await setup?.close();
});

describe('Connect calls through the router', () => {
  it('run as operations of origin connect that every plugin sees, with the HTTP method they came with', async () => {
    seen.length = 0;
    await connectGet(setup.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', getParams({ first: 1 }));
    await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', { first: 2 });
    expect(seen).toEqual([
      { origin: 'connect', method: 'GET', operationName: 'ListProjects' },
      { origin: 'connect', method: 'POST', operationName: 'ListProjects' },
    ]);
  });

  it('are served from the response cache, and GET answers carry its Cache-Control for CDNs', async () => {
    const path = '/projects.v1.ProjectsService/GetProject';
    setup.graph.projects.reset();
    setup.graph.users.reset();
    const first = await connectGet(setup.served.connectUrl, path, getParams({ id: '3' }));
    const second = await connectGet(setup.served.connectUrl, path, getParams({ id: '3' }));
    expect(second.body).toEqual(first.body);
    expect(first.body).toEqual({
      project: { id: '3', name: 'Paused', status: 'PROJECT_STATUS_ON_HOLD', tags: ['later'], score: 1, owner: { id: 'u2', name: 'Grace' } },
    });
    expect(second.headers.get('cache-control')).toMatch(/^public, max-age=(59|60)$/);
    expect({ projects: setup.graph.projects.calls.length, users: setup.graph.users.calls.length }).toEqual({ projects: 1, users: 1 });
    // POST answers are not for shared caches: no Cache-Control is passed on.
    const post = await connectPost(setup.served.connectUrl, path, { id: '3' });
    expect(post.headers.get('cache-control')).toBeNull();
  });

  it('pass client headers to subgraphs by the router header rules', async () => {
    setup.graph.projects.reset();
    await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/Search', { term: 'switch' }, { authorization: 'Bearer abc' });
    expect(setup.graph.projects.calls.map((call) => call.headers.authorization)).toEqual(['Bearer abc']);
  });
});

describe('Connect-Timeout-Ms', () => {
  let slow: TestSubgraph;
  let router: Awaited<ReturnType<typeof startTestRouter>>;
  let url: string;
  let services: string;
  const SDL = /* GraphQL */ `
    type Query {
      slow: String
    }
  `;

  beforeAll(async () => {
    slow = await startSubgraph({ name: 'slow', typeDefs: SDL, resolvers: { Query: { slow: () => 'late' } }, delayMs: 500 });
    services = await mkdtemp(join(tmpdir(), 'switchyard-connect-'));
    const apiSchema = readSupergraph(composeSubgraphs([{ name: 'slow', url: slow.url, sdl: SDL }]).supergraphSdl).apiSchema;
    await writeContract(join(services, 'slow', 'v1'), { 'Slow.graphql': 'query Slow { slow }' }, apiSchema);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    router = await startTestRouter({
      subgraphs: [slow],
      plugins: [useConnect({ enabled: true, server: { listen_addr: `127.0.0.1:${port}` }, services: { path: services } })],
    });
  });

  afterAll(async () => {
    await router?.close();
    await slow?.close();
    await rm(services, { recursive: true, force: true });
  });

  it('ends a call that takes longer with deadline_exceeded (504)', async () => {
    const answer = await connectPost(url, '/slow.v1.SlowService/Slow', {}, { 'connect-timeout-ms': '50' });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 504,
      body: { code: 'deadline_exceeded', message: 'the call did not finish within Connect-Timeout-Ms (50ms)' },
    });
    const patient = await connectPost(url, '/slow.v1.SlowService/Slow', {}, { 'connect-timeout-ms': '5000' });
    expect({ status: patient.status, body: patient.body }).toEqual({ status: 200, body: { slow: 'late' } });
  });
});
