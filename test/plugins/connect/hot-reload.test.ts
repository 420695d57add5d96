import { copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterError } from '../../../src/index.js';
import {
  captureLogs,
  connectPost,
  eventually,
  PROJECT_OPERATIONS,
  startConnectRouter,
  startProjectsGraph,
  tempDir,
  writeContract,
  type ConnectRouter,
  type LogLine,
  type ProjectsGraph,
} from './fixtures.js';

let graph: ProjectsGraph;

beforeAll(async () => {
  graph = await startProjectsGraph();
});

afterAll(async () => {
  await graph?.close();
});

const LIST = '/projects.v1.ProjectsService/ListProjects';
const GET = '/projects.v1.ProjectsService/GetProject';

async function expectStatus(base: string, path: string, body: unknown, status: number): Promise<void> {
  const answer = await connectPost(base, path, body);
  expect(answer.status).toBe(status);
}

describe('Connect contracts are reloaded without a restart', () => {
  let served: ConnectRouter;
  let services: string;
  let contract: string;
  let lines: LogLine[];

  beforeAll(async () => {
    services = await tempDir((fn) => afterAll(fn));
    contract = join(services, 'projects', 'v1');
    await writeContract(contract, { 'GetProject.graphql': PROJECT_OPERATIONS['GetProject.graphql']! }, graph.apiSchema);
    const logs = captureLogs();
    lines = logs.lines;
    served = await startConnectRouter(graph, services, { logger: logs.logger });
  });

  afterAll(async () => {
    await served?.close();
  });

  it('serves an operation added to a contract once the contract is regenerated', async () => {
    await expectStatus(served.connectUrl, LIST, {}, 404);
    await writeContract(contract, { 'ListProjects.graphql': PROJECT_OPERATIONS['ListProjects.graphql']! }, graph.apiSchema);
    const answer = await eventually(async () => {
      const listed = await connectPost(served.connectUrl, LIST, { first: 1 });
      expect(listed.status).toBe(200);
      return listed;
    });
    expect(answer.body).toEqual({ projects: [{ id: '1', name: 'Switchyard', status: 'PROJECT_STATUS_ACTIVE' }] });
    expect(lines.filter((line) => line.msg === 'Connect contracts reloaded').at(-1)).toEqual(
      expect.objectContaining({ level: 'info', plugin: 'connect', services: ['projects.v1.ProjectsService'], rpcs: 2 }),
    );
  });

  it('keeps the previous version of a contract in service while its files are broken, and logs why', async () => {
    // An operation without its RPC: the proto was not regenerated.
    await writeFile(join(contract, 'Search.graphql'), PROJECT_OPERATIONS['Search.graphql']!);
    const logged = await eventually(async () => {
      const line = lines.find((l) => l.msg === 'Connect contract cannot be loaded; its previous version stays in service');
      expect(line).toBeDefined();
      return line!;
    });
    expect(logged).toEqual(
      expect.objectContaining({
        level: 'error',
        dir: contract,
        reason:
          'projects/v1: operation Search has no RPC in the proto, which is older than the operations; regenerate it (switchyard grpc-service generate ... --connect-contract projects/v1)',
      }),
    );
    await expectStatus(served.connectUrl, GET, { id: '1' }, 200);
    await expectStatus(served.connectUrl, LIST, {}, 200);
    await expectStatus(served.connectUrl, '/projects.v1.ProjectsService/Search', { term: 'x' }, 404);
    await rm(join(contract, 'Search.graphql'));
  });

  it('serves a contract added to the services folder, and stops serving one removed from it', async () => {
    const failing = join(services, 'failing', 'v1');
    await writeContract(failing, { 'Failing.graphql': PROJECT_OPERATIONS['Failing.graphql']! }, graph.apiSchema);
    await eventually(() => expectStatus(served.connectUrl, '/failing.v1.FailingService/Failing', {}, 500));
    await rm(failing, { recursive: true });
    await eventually(() => expectStatus(served.connectUrl, '/failing.v1.FailingService/Failing', {}, 404));
    await expectStatus(served.connectUrl, GET, { id: '1' }, 200);
  });
});

/** Code and message of the error that stops a router from starting with this services folder. */
async function startupFailure(services: string): Promise<{ code: string; message: string }> {
  const error = await startConnectRouter(graph, services).then(
    async (served) => {
      await served.close();
      return undefined;
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(RouterError);
  return { code: (error as RouterError).code, message: (error as RouterError).message };
}

describe('Connect contracts at startup', () => {
  it('refuse to start the router when a contract is broken, naming the folder or file and the fix', async ({ onTestFinished }) => {
    const services = await tempDir(onTestFinished);
    const contract = join(services, 'projects', 'v1');
    await mkdir(contract, { recursive: true });
    await writeFile(join(contract, 'GetProject.graphql'), PROJECT_OPERATIONS['GetProject.graphql']!);
    expect(await startupFailure(services)).toEqual({
      code: 'CONNECT_CONTRACT_INVALID',
      message: 'projects/v1: operations without a contract.proto; generate it with switchyard grpc-service generate -i <schema> --connect-contract projects/v1',
    });
    await writeContract(contract, {}, graph.apiSchema);
    await writeFile(join(contract, 'GetProject.graphql'), 'query { project(id: "1") { id } }');
    expect(await startupFailure(services)).toEqual({
      code: 'CONNECT_CONTRACT_INVALID',
      message: `${join(contract, 'GetProject.graphql')}: the operation is anonymous; name it (for example "query GetProject(...)"): its name becomes the RPC name`,
    });
  });

  it('read operations from subfolders of a contract, and refuse one RPC name defined in two of them', async ({ onTestFinished }) => {
    const services = await tempDir(onTestFinished);
    const contract = join(services, 'projects', 'v1');
    await writeContract(contract, { 'GetProject.graphql': PROJECT_OPERATIONS['GetProject.graphql']! }, graph.apiSchema);
    await mkdir(join(contract, 'queries', 'again'), { recursive: true });
    await rename(join(contract, 'GetProject.graphql'), join(contract, 'queries', 'GetProject.graphql'));
    const served = await startConnectRouter(graph, services);
    try {
      await expectStatus(served.connectUrl, GET, { id: '1' }, 200);
    } finally {
      await served.close();
    }
    await writeFile(join(contract, 'queries', 'again', 'Copy.graphql'), PROJECT_OPERATIONS['GetProject.graphql']!);
    expect(await startupFailure(services)).toEqual({
      code: 'CONNECT_CONTRACT_INVALID',
      message: `${join(contract, 'queries', 'again', 'Copy.graphql')}: operation GetProject is also defined in ${join(contract, 'queries', 'GetProject.graphql')}; RPC names must be unique`,
    });
    await rm(join(contract, 'queries', 'again'), { recursive: true });
    await mkdir(join(services, 'empty'));
    await copyFile(join(contract, 'contract.proto'), join(services, 'empty', 'contract.proto'));
    expect(await startupFailure(services)).toEqual({
      code: 'CONNECT_CONTRACT_INVALID',
      message: `${join(services, 'empty')}: a proto without operations; a contract folder holds its operation files (.graphql, .gql, .graphqls, .gqls) at any depth`,
    });
  });

  it('refuse to start the router when the services folder does not exist', async ({ onTestFinished }) => {
    const missing = join(await tempDir(onTestFinished), 'nope');
    expect(await startupFailure(missing)).toEqual({ code: 'CONNECT_CONTRACT_INVALID', message: `services folder ${missing}: no such folder` });
  });

  it('start with an empty services folder, warn, and serve a contract added later', async ({ onTestFinished }) => {
    const services = await tempDir(onTestFinished);
    const { logger, lines } = captureLogs();
    const served = await startConnectRouter(graph, services, { logger });
    onTestFinished(() => served.close());
    expect(lines.find((line) => line.level === 'warn' && line.plugin === 'connect')).toEqual(
      expect.objectContaining({ msg: 'No Connect contracts in the services folder yet; add one and it is served without a restart', path: services }),
    );
    await writeContract(join(services, 'projects', 'v1'), { 'GetProject.graphql': PROJECT_OPERATIONS['GetProject.graphql']! }, graph.apiSchema);
    const answer = await eventually(async () => {
      const got = await connectPost(served.connectUrl, GET, { id: '3' });
      expect(got.status).toBe(200);
      return got;
    });
    expect(answer.body).toEqual({
      project: { id: '3', name: 'Paused', status: 'PROJECT_STATUS_ON_HOLD', tags: ['later'], score: 1, owner: { id: 'u2', name: 'Grace' } },
    });
  });
});
