/**
 * A folder `grpc-service generate -o <dir> -w <dir>` writes (wgc's layout: the
 * operations service's `service.proto` beside the operations) is served by
 * the `connect` plugin as it is.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { connectGet, connectPost, getParams, startConnectRouter, startProjectsGraph } from '../plugins/connect/fixtures.js';
import { switchyard, tempDir } from './support.js';

describe('grpc-service generate --with-operations, served by the connect plugin', () => {
  it('serves each operation of the generated service.proto as a Connect RPC', { timeout: 60_000 }, async ({ onTestFinished }) => {
    const graph = await startProjectsGraph();
    onTestFinished(() => graph.close());
    const dir = await tempDir(onTestFinished);
    const contract = join(dir, 'services', 'projects', 'v1');
    await mkdir(contract, { recursive: true });
    await writeFile(join(dir, 'schema.graphql'), printSchema(graph.apiSchema));
    await writeFile(join(contract, 'GetProject.graphql'), 'query GetProject($id: ID!) { project(id: $id) { id name ...More } }\nfragment More on Project { status tags }\n');
    await writeFile(join(contract, 'ListProjects.graphql'), 'query ListProjects($status: ProjectStatus) { projects(status: $status) { id name } }\n');
    const generated = await switchyard(
      ['grpc-service', 'generate', '-i', 'schema.graphql', '-o', 'services/projects/v1', '-w', 'services/projects/v1', '-p', 'projects.v1', 'ProjectsService'],
      dir,
    );
    expect(generated).toEqual({
      code: 0,
      stdout: 'wrote services/projects/v1/service.proto, services/projects/v1/service.proto.lock.json (package projects.v1, service ProjectsService, from 2 operation files)\n',
      stderr: '',
    });
    expect((await readdir(contract)).sort()).toEqual(['GetProject.graphql', 'ListProjects.graphql', 'service.proto', 'service.proto.lock.json']);

    const served = await startConnectRouter(graph, join(dir, 'services'));
    onTestFinished(() => served.close());
    const project = await connectPost(served.connectUrl, '/projects.v1.ProjectsService/GetProject', { id: '1' });
    expect({ status: project.status, body: project.body }).toEqual({
      status: 200,
      body: { project: { id: '1', name: 'Switchyard', status: 'PROJECT_STATUS_ACTIVE', tags: ['router', 'graphql'] } },
    });
    const onHold = await connectGet(served.connectUrl, '/projects.v1.ProjectsService/ListProjects', getParams({ status: 'PROJECT_STATUS_ON_HOLD' }));
    expect({ status: onHold.status, body: onHold.body }).toEqual({ status: 200, body: { projects: [{ id: '3', name: 'Paused' }] } });
  });
});
