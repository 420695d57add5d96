/**
 * The TypeScript template end to end, as a user runs it: init, install
 * (switchyard packed from this checkout, everything else from the npm cache),
 * bootstrap, start, then queries and mutations through the router to the
 * Connect RPC service. Ports are free ones, set the way the README says.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { initProject } from '../../src/grpc/templates.js';
import { freePort, tempDir } from './support.js';
import { packLocalSwitchyard } from './local-package.js';

const exec = promisify(execFile);

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await exec('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

async function untilAnswered<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.pid === undefined) return resolve();
    child.once('exit', () => resolve());
    // npm start runs a process group (npm, the start script, the service, the router): end all of it.
    process.kill(-child.pid, 'SIGTERM');
  });
}

describe('the TypeScript gRPC service template', () => {
  it('goes from init to queries and mutations through the router', { timeout: 300_000 }, async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const tarball = await packLocalSwitchyard(dir);
    const project = join(dir, 'projects-service');
    await initProject({ template: 'typescript', directory: project });

    const [servicePort, routerPort] = [await freePort(), await freePort()];
    const manifest = join(project, 'package.json');
    await writeFile(manifest, (await readFile(manifest, 'utf8')).replace('"switchyard": "^0.1.0"', `"switchyard": "file:${tarball}"`));
    const compose = join(project, 'router.compose.yaml');
    await writeFile(compose, (await readFile(compose, 'utf8')).replace('localhost:50051', `localhost:${servicePort}`));

    // From the npm cache the suite's own install filled; a cache that lacks a package's metadata
    // (one filled from a lock file alone) falls back to the registry for just that.
    await npm(['install', '--offline'], project).catch((error: Error) => {
      if (!/ENOTCACHED/.test(error.message)) throw error;
      return npm(['install', '--prefer-offline'], project);
    });
    const bootstrap = await npm(['run', 'bootstrap'], project);
    expect(bootstrap).toContain(
      'wrote proto/service/v1/service.proto, proto/service/v1/mapping.json, proto/service/v1/service.proto.lock.json (package service.v1, service ServiceService)',
    );
    expect(bootstrap).toContain('wrote execution config to ./router.execution.config.json (1 subgraphs: projects)');
    await npm(['run', 'typecheck'], project);
    const executionConfig = JSON.parse(await readFile(join(project, 'router.execution.config.json'), 'utf8')) as { subgraphs: Array<{ kind: string; url: string }> };
    expect(executionConfig.subgraphs.map(({ kind, url }) => ({ kind, url }))).toEqual([{ kind: 'grpc', url: `dns:///localhost:${servicePort}` }]);

    const started = spawn('npm', ['start'], {
      cwd: project,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: String(servicePort),
        HOST: '127.0.0.1',
        LISTEN_ADDR: `127.0.0.1:${routerPort}`,
        CONNECT_RPC_SERVER_LISTEN_ADDR: `127.0.0.1:${await freePort()}`,
        LOG_LEVEL: 'info',
      },
    });
    let output = '';
    started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    onTestFinished(() => stop(started));

    const graphql = async (query: string, variables?: Record<string, unknown>) => {
      const response = await fetch(`http://127.0.0.1:${routerPort}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: Record<string, unknown> | null; errors?: unknown[] };
    };
    const listed = await untilAnswered('the router and the service', async () => {
      const body = await graphql('{ listProjects { id name description status } }');
      return body.data ? body : undefined;
    }).catch((error: Error) => {
      throw new Error(`${error.message}\n${output}`);
    });
    expect(listed).toEqual({
      data: {
        listProjects: [
          { id: '1', name: 'Switchyard', description: 'A federated GraphQL router', status: 'ACTIVE' },
          { id: '2', name: 'Playground', description: null, status: 'INACTIVE' },
        ],
      },
    });
    expect(output).toContain(`[service] gRPC service listening on 127.0.0.1:${servicePort}`);

    const created = await graphql('mutation ($input: CreateProjectInput!) { createProject(input: $input) { id name description status } }', {
      input: { name: 'Docs', description: 'Write the tutorial' },
    });
    expect(created).toEqual({ data: { createProject: { id: '3', name: 'Docs', description: 'Write the tutorial', status: 'ACTIVE' } } });

    const updated = await graphql('mutation { updateProject(id: "3", input: { status: ARCHIVED }) { id name status createdAt updatedAt } }');
    expect(updated.data?.updateProject).toMatchObject({ id: '3', name: 'Docs', status: 'ARCHIVED' });

    expect(await graphql('{ getProject(id: "3") { name status } missing: getProject(id: "99") { name } }')).toEqual({
      data: { getProject: { name: 'Docs', status: 'ARCHIVED' }, missing: null },
    });
    expect(await graphql('{ listProjects { id } }')).toEqual({ data: { listProjects: [{ id: '1' }, { id: '2' }, { id: '3' }] } });
    expect(await graphql('mutation { updateProject(id: "99", input: { name: "x" }) { id } }')).toEqual({
      data: null,
      errors: [
        {
          message: 'project 99 not found',
          path: ['updateProject'],
          // The service's own error: subgraph_error_propagation's defaults forward extensions.code only.
          extensions: { code: 'NOT_FOUND' },
        },
      ],
    });

    const playground = await fetch(`http://127.0.0.1:${routerPort}/`, { headers: { accept: 'text/html' } });
    expect(playground.status).toBe(200);
  });
});
