/**
 * A Cosmo-shaped `connect_rpc` section started as it is: the services
 * folder named by `storage.provider_id` (a `storage_providers.file_system`
 * entry), `server.base_url`, and a contract laid out as Cosmo reads one (a
 * folder with one `service.proto`, its operations in nested subfolders).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRouter } from '../../src/testing/index.js';
import { switchyard } from '../grpc/support.js';
import { configFailure, loadConfigText } from '../support/config-file.js';
import {
  captureLogs,
  connectGet,
  connectPost,
  getParams,
  startConnectRouter,
  freePort,
  PROJECT_OPERATIONS,
  startProjectsGraph,
  tempDir,
  writeContract,
  type ProjectsGraph,
} from '../plugins/connect/fixtures.js';

let graph: ProjectsGraph;
let dir: string;
let services: string;

beforeAll(async () => {
  graph = await startProjectsGraph();
  dir = await tempDir((fn) => afterAll(fn));
  services = join(dir, 'services');
  // Cosmo's layout: <root>/<group>/<service>/service.proto, operations at any depth below it.
  const contract = join(services, 'company', 'projects.v1');
  const operations = ['GetProject.graphql', 'ListProjects.graphql', 'CreateProject.graphql'];
  await writeContract(contract, Object.fromEntries(operations.map((name) => [name, PROJECT_OPERATIONS[name]!])), graph.apiSchema);
  await rename(join(contract, 'contract.proto'), join(contract, 'service.proto'));
  await mkdir(join(contract, 'queries', 'lists'), { recursive: true });
  await mkdir(join(contract, 'mutations'), { recursive: true });
  await rename(join(contract, 'GetProject.graphql'), join(contract, 'queries', 'GetProject.graphql'));
  await rename(join(contract, 'ListProjects.graphql'), join(contract, 'queries', 'lists', 'ListProjects.graphql'));
  await rename(join(contract, 'CreateProject.graphql'), join(contract, 'mutations', 'CreateProject.graphql'));
});

afterAll(async () => {
  await graph?.close();
});

const cosmoSection = (port: number) => `storage_providers:
  file_system:
    - id: fs-services
      path: ${services}
connect_rpc:
  enabled: true
  server:
    listen_addr: "127.0.0.1:${port}"
    base_url: "https://api.example.com/rpc"
  storage:
    provider_id: fs-services
`;

describe("Cosmo's connect_rpc keys", () => {
  it('serves the folder storage.provider_id names, with operations found in nested subfolders, and logs base_url', async () => {
    const port = await freePort();
    const setup = await loadConfigText(dir, cosmoSection(port));
    const { logger, lines } = captureLogs();
    const router = await startTestRouter({
      subgraphs: [graph.projects, graph.users],
      plugins: setup.plugins,
      logger,
      config: { storage_providers: { file_system: [{ id: 'fs-services', path: services }] } },
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      const project = await connectPost(base, '/projects.v1.ProjectsService/GetProject', { id: '2' });
      expect({ status: project.status, body: project.body }).toEqual({ status: 200, body: { project: { id: '2', name: 'Archive', status: 'PROJECT_STATUS_ARCHIVED', tags: [] } } });
      const list = await connectPost(base, '/projects.v1.ProjectsService/ListProjects', { status: 'PROJECT_STATUS_ON_HOLD' });
      expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { projects: [{ id: '3', name: 'Paused', status: 'PROJECT_STATUS_ON_HOLD' }] } });
      const created = await connectPost(base, '/projects.v1.ProjectsService/CreateProject', { input: { name: 'Nested', tags: [] } });
      expect(created.status).toBe(200);
      const listening = lines.find((line) => line.msg === 'Connect endpoints listening');
      expect(listening).toMatchObject({ base_url: 'https://api.example.com/rpc', path: services, services: ['projects.v1.ProjectsService'], rpcs: 3 });
    } finally {
      await router.close();
    }
  });

  it('takes the provider id and base URL from the environment too', async () => {
    const port = await freePort();
    const setup = await loadConfigText(dir, `storage_providers:\n  file_system:\n    - id: fs-services\n      path: ${services}\n`, {
      CONNECT_RPC_ENABLED: 'true',
      CONNECT_RPC_SERVER_LISTEN_ADDR: `127.0.0.1:${port}`,
      CONNECT_RPC_SERVER_BASE_URL: 'http://localhost:5026',
      CONNECT_RPC_STORAGE_PROVIDER_ID: 'fs-services',
    });
    const router = await startTestRouter({
      subgraphs: [graph.projects, graph.users],
      plugins: setup.plugins,
      config: { storage_providers: { file_system: [{ id: 'fs-services', path: services }] } },
    });
    try {
      expect((await connectPost(`http://127.0.0.1:${port}`, '/projects.v1.ProjectsService/GetProject', { id: '1' })).status).toBe(200);
    } finally {
      await router.close();
    }
  });

  it('refuses an undeclared provider, a Redis provider, both ways of naming the folder, a bad base_url and graphql_endpoint, naming the key', async () => {
    expect(await configFailure(dir, 'connect_rpc:\n  enabled: true\n  storage:\n    provider_id: nowhere\n')).toContain(
      'connect_rpc.storage.provider_id: unknown storage provider "nowhere"; declare it under storage_providers.file_system as {id, path}',
    );
    expect(
      await configFailure(
        dir,
        'storage_providers:\n  redis:\n    - id: cache\n      urls: ["redis://127.0.0.1:6379"]\nconnect_rpc:\n  enabled: true\n  storage:\n    provider_id: cache\n',
      ),
    ).toContain('"cache" is a shared store (Redis); the services folder must be a storage_providers.file_system entry');
    expect(
      await configFailure(
        dir,
        `storage_providers:\n  file_system:\n    - id: fs\n      path: ${services}\nconnect_rpc:\n  storage:\n    provider_id: fs\n  services:\n    path: ./services\n`,
      ),
    ).toContain('connect_rpc.storage.provider_id: and connect_rpc.services.path both name the services folder; keep one of them');
    expect(await configFailure(dir, 'connect_rpc:\n  server:\n    base_url: "localhost:5026"\n')).toContain('connect_rpc.server.base_url');
    expect(await configFailure(dir, 'connect_rpc:\n  graphql_endpoint: "http://localhost:3002/graphql"\n')).toContain('graphql_endpoint');
    expect(await configFailure(dir, 'storage_providers:\n  file_system:\n    - id: fs\n      path: a\n    - id: fs\n      path: b\n')).toContain('duplicate id "fs"');
    expect(await configFailure(dir, 'storage_providers:\n  file_system:\n    - id: fs\n')).toContain('storage_providers.file_system[0].path');
  });

  it('serves the folder `grpc-service generate -w` wrote from nested operation folders, every file it compiled an RPC from', { timeout: 60_000 }, async ({ onTestFinished }) => {
    const root = await tempDir(onTestFinished);
    const contract = join(root, 'services', 'projects.v1');
    await mkdir(join(contract, 'queries', 'lists'), { recursive: true });
    await mkdir(join(contract, 'mutations'), { recursive: true });
    await writeFile(join(root, 'schema.graphql'), printSchema(graph.apiSchema));
    await writeFile(join(contract, 'queries', 'GetProject.graphql'), 'query GetProject($id: ID!) { project(id: $id) { id name } }\n');
    await writeFile(join(contract, 'queries', 'lists', 'ListProjects.gql'), 'query ListProjects($status: ProjectStatus) { projects(status: $status) { id name } }\n');
    await writeFile(join(contract, 'mutations', 'CreateProject.graphqls'), PROJECT_OPERATIONS['CreateProject.graphql']!);
    const generated = await switchyard(
      ['grpc-service', 'generate', 'ProjectsService', '-i', 'schema.graphql', '-o', 'services/projects.v1', '-w', 'services/projects.v1', '-p', 'projects.v1'],
      root,
    );
    expect(generated).toMatchObject({ code: 0, stderr: '' });
    expect(generated.stdout).toContain('from 3 operation files');

    const served = await startConnectRouter(graph, join(root, 'services'));
    onTestFinished(() => served.close());
    const project = await connectPost(served.connectUrl, '/projects.v1.ProjectsService/GetProject', { id: '1' });
    expect({ status: project.status, body: project.body }).toEqual({ status: 200, body: { project: { id: '1', name: 'Switchyard' } } });
    const onHold = await connectGet(served.connectUrl, '/projects.v1.ProjectsService/ListProjects', getParams({ status: 'PROJECT_STATUS_ON_HOLD' }));
    expect({ status: onHold.status, body: onHold.body }).toEqual({ status: 200, body: { projects: [{ id: '3', name: 'Paused' }] } });
    const created = await connectPost(served.connectUrl, '/projects.v1.ProjectsService/CreateProject', { input: { name: 'From -w', tags: [] } });
    expect(created.status).toBe(200);
  });
});
