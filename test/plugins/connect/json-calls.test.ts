import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGet, connectPost, getParams, serveProjects, type ServedProjects } from './fixtures.js';

let setup: ServedProjects;

beforeAll(async () => {
  setup = await serveProjects();
});

afterAll(async () => {
  await setup?.close();
});

describe('Connect with JSON', () => {
  it('answers a POST with the response message: lowerCamelCase names, proto enum names, fragments and aliases resolved, nulls left out', async () => {
    const answer = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/GetProject', { id: '1' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.body).toEqual({
      project: {
        id: '1',
        name: 'Switchyard',
        status: 'PROJECT_STATUS_ACTIVE',
        tags: ['router', 'graphql'],
        description: 'A router',
        score: 4.5,
        dueAt: '2030-01-01',
        owner: { id: 'u1', name: 'Ada' },
      },
    });
    const empty = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/GetProject', { id: '2' });
    expect(empty.body).toEqual({ project: { id: '2', name: 'Archive', status: 'PROJECT_STATUS_ARCHIVED', tags: [] } });
  });

  it('answers a GET of a query with the same message', async () => {
    const answer = await connectGet(setup.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', getParams({ status: 'PROJECT_STATUS_ON_HOLD' }));
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: { projects: [{ id: '3', name: 'Paused', status: 'PROJECT_STATUS_ON_HOLD' }] } });
  });

  it('takes {} for no arguments and applies the operation defaults', async () => {
    const answer = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', {});
    expect(answer.body).toEqual({
      projects: [
        { id: '1', name: 'Switchyard', status: 'PROJECT_STATUS_ACTIVE' },
        { id: '2', name: 'Archive', status: 'PROJECT_STATUS_ARCHIVED' },
        { id: '3', name: 'Paused', status: 'PROJECT_STATUS_ON_HOLD' },
      ],
    });
    const first = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/ListProjects', { first: 1 });
    expect(first.body).toEqual({ projects: [{ id: '1', name: 'Switchyard', status: 'PROJECT_STATUS_ACTIVE' }] });
  });

  it('merges the members of a union into one message', async () => {
    const answer = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/Search', { term: 'core' });
    expect(answer.body).toEqual({ search: [{ id: 't1', name: 'Core team' }] });
    const projects = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/Search', { term: 'arch' });
    expect(projects.body).toEqual({ search: [{ id: '2', name: 'Archive' }] });
  });

  it('runs a mutation over POST with an input message, enum values and proto field names accepted', async () => {
    const answer = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/CreateProject', {
      input: { name: 'Connect', tags: ['rpc'], status: 'PROJECT_STATUS_ON_HOLD', due_at: '2031-05-01' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      createProject: { id: '4', name: 'Connect', status: 'PROJECT_STATUS_ON_HOLD', tags: ['rpc'], dueAt: '2031-05-01' },
    });
    const defaults = await connectPost(setup.served.connectUrl, '/projects.v1.ProjectsService/CreateProject', { input: { name: 'Plain' } });
    expect(defaults.body).toEqual({ createProject: { id: '5', name: 'Plain', status: 'PROJECT_STATUS_ACTIVE', tags: [] } });
    expect(setup.graph.rows.map((row) => row.name)).toEqual(['Switchyard', 'Archive', 'Paused', 'Connect', 'Plain']);
  });
});
