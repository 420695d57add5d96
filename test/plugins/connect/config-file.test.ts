import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterError } from '../../../src/index.js';
import { startTestRouter } from '../../../src/testing/index.js';
import { configFailure, loadConfigText } from '../../support/config-file.js';
import { connectPost, freePort, PROJECT_OPERATIONS, startProjectsGraph, tempDir, writeContract, type ProjectsGraph } from './fixtures.js';

let graph: ProjectsGraph;
let dir: string;
let services: string;

beforeAll(async () => {
  graph = await startProjectsGraph();
  dir = await tempDir((fn) => afterAll(fn));
  services = join(dir, 'services');
  await writeContract(join(services, 'projects', 'v1'), { 'GetProject.graphql': PROJECT_OPERATIONS['GetProject.graphql']! }, graph.apiSchema);
});

afterAll(async () => {
  await graph?.close();
});

describe('connect_rpc in router.config.yaml', () => {
  it('serves the contracts of services.path on server.listen_addr when enabled', async () => {
    const port = await freePort();
    const setup = await loadConfigText(dir, `connect_rpc:\n  enabled: true\n  server:\n    listen_addr: "127.0.0.1:${port}"\n  services:\n    path: ${services}\n`);
    expect(setup.plugins.map((plugin) => plugin.name)).toContain('connect');
    const router = await startTestRouter({ subgraphs: [graph.projects, graph.users], plugins: setup.plugins });
    try {
      const answer = await connectPost(`http://127.0.0.1:${port}`, '/projects.v1.ProjectsService/GetProject', { id: '2' });
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: { project: { id: '2', name: 'Archive', status: 'PROJECT_STATUS_ARCHIVED', tags: [] } } });
    } finally {
      await router.close();
    }
  });

  it('takes every key from the environment too', async () => {
    const port = await freePort();
    const setup = await loadConfigText(dir, '', { CONNECT_RPC_ENABLED: 'true', CONNECT_RPC_SERVER_LISTEN_ADDR: `127.0.0.1:${port}`, CONNECT_RPC_SERVICES_PATH: services });
    const router = await startTestRouter({ subgraphs: [graph.projects, graph.users], plugins: setup.plugins });
    try {
      const answer = await connectPost(`http://127.0.0.1:${port}`, '/projects.v1.ProjectsService/GetProject', { id: '2' });
      expect(answer.status).toBe(200);
    } finally {
      await router.close();
    }
  });

  it('adds no plugin when the section is absent or enabled is false', async () => {
    expect((await loadConfigText(dir, '')).plugins.map((plugin) => plugin.name)).not.toContain('connect');
    expect((await loadConfigText(dir, 'connect_rpc:\n  enabled: false\n')).plugins.map((plugin) => plugin.name)).not.toContain('connect');
  });

  it('refuses a bad listen address, an empty services path and unknown keys, naming each', async () => {
    expect(await configFailure(dir, 'connect_rpc:\n  enabled: true\n  server:\n    listen_addr: "localhost"\n')).toContain('connect_rpc.server.listen_addr');
    expect(await configFailure(dir, 'connect_rpc:\n  services:\n    path: ""\n')).toContain('connect_rpc.services.path');
    expect(await configFailure(dir, 'connect_rpc:\n  enabled: true\n  listen_addr: "localhost:5026"\n')).toContain('listen_addr');
    expect(await configFailure(dir, '', { CONNECT_RPC_ENABLED: 'maybe' })).toContain('CONNECT_RPC_ENABLED');
  });

  it('fails startup with the address when the listener cannot bind it', async () => {
    const port = await freePort();
    const holder = await startTestRouter({
      subgraphs: [graph.projects, graph.users],
      plugins: (await loadConfigText(dir, `connect_rpc:\n  enabled: true\n  server:\n    listen_addr: "127.0.0.1:${port}"\n  services:\n    path: ${services}\n`)).plugins,
    });
    try {
      const error = await startTestRouter({
        subgraphs: [graph.projects, graph.users],
        plugins: (await loadConfigText(dir, `connect_rpc:\n  enabled: true\n  server:\n    listen_addr: "127.0.0.1:${port}"\n  services:\n    path: ${services}\n`)).plugins,
      }).then(
        async (router) => {
          await router.close();
          return undefined;
        },
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(RouterError);
      expect({ code: (error as RouterError).code, message: (error as RouterError).message }).toEqual({
        code: 'CONFIG_INVALID',
        message: `[connect] cannot listen on 127.0.0.1:${port} for the Connect endpoints (connect_rpc.server.listen_addr): listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
      });
    } finally {
      await holder.close();
    }
  });
});
