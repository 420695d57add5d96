/**
 * examples/grpc-service/README.md, followed as written: every curl command's
 * request is sent and its answer compared with the one the tutorial shows,
 * and the "Change the schema" step is applied from its snippets. The
 * project's packages come from this checkout (node_modules linked, router
 * started in-process as `switchyard router` would), so no install is needed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { graphDrivenPlugins } from '../../src/cli/builtin-plugins.js';
import { composeGraph, writeOutput } from '../../src/compose/index.js';
import { writeContractFiles } from '../../src/connect/contract-files.js';
import { writeServiceFiles } from '../../src/grpc/service-files.js';
import { initProject } from '../../src/grpc/templates.js';
import { createLogger, createRouter, type Router } from '../../src/index.js';
import { loadRouterSetup } from '../../src/setup/index.js';
import { freePort, tempDir } from './support.js';

const exec = promisify(execFile);
const REPO = join(import.meta.dirname, '../..');
const TUTORIAL = join(REPO, 'examples/grpc-service/README.md');

interface Exchange {
  readonly request: string;
  readonly response: string;
}

/** The tutorial's sections by heading, each with its fenced code blocks in order. */
function sections(markdown: string): Map<string, Array<{ lang: string; code: string }>> {
  const result = new Map<string, Array<{ lang: string; code: string }>>();
  for (const part of markdown.split(/^## /m).slice(1)) {
    const heading = part.slice(0, part.indexOf('\n'));
    const blocks = [...part.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, code: match[2]! }));
    result.set(heading, blocks);
  }
  return result;
}

/** Each curl command's JSON body, with the JSON block that follows it. */
function exchanges(blocks: Array<{ lang: string; code: string }>): Exchange[] {
  const found: Exchange[] = [];
  blocks.forEach((block, index) => {
    const body = block.lang === 'sh' ? /-d '(.*)'$/m.exec(block.code)?.[1] : undefined;
    const next = blocks[index + 1];
    if (body && next?.lang === 'json') found.push({ request: body, response: next.code.trim() });
  });
  return found;
}

describe('the gRPC service tutorial (examples/grpc-service)', () => {
  it('answers every query as the tutorial shows, before and after changing the schema', { timeout: 180_000 }, async ({ onTestFinished }) => {
    const tutorial = sections(await readFile(TUTORIAL, 'utf8'));
    const dir = await tempDir(onTestFinished);
    const project = join(dir, 'projects-service');
    await initProject({ template: 'typescript', directory: project });
    await symlink(join(REPO, 'node_modules'), join(project, 'node_modules'), 'dir');
    const [servicePort, routerPort, connectPort] = [await freePort(), await freePort(), await freePort()];
    const compose = join(project, 'router.compose.yaml');
    await writeFile(compose, (await readFile(compose, 'utf8')).replace('localhost:50051', `127.0.0.1:${servicePort}`));
    const env = { ...process.env, PATH: `${join(REPO, 'node_modules/.bin')}:${process.env.PATH ?? ''}` };

    // npm run generate: generate:proto, generate:buf, generate:router.
    const generate = async () => {
      await writeServiceFiles({ schemaFile: join(project, 'src/graph/schema.graphql'), outDir: join(project, 'proto/service/v1') });
      // --connect-contract: the template's Connect contract.
      await writeContractFiles({ dir: join(project, 'services/projects/v1'), schema: await readFile(join(project, 'src/graph/schema.graphql'), 'utf8') });
      await exec('buf', ['lint'], { cwd: project, env });
      await exec('buf', ['generate'], { cwd: project, env });
      await writeOutput(join(project, 'router.execution.config.json'), await composeGraph(compose));
    };

    // npm start: the service, and the router as `switchyard router -c router.config.yaml` builds it.
    let service: ChildProcess | undefined;
    let router: Router | undefined;
    const start = async () => {
      service = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], { cwd: project, env: { ...env, PORT: String(servicePort), HOST: '127.0.0.1' }, stdio: 'ignore' });
      const setup = await loadRouterSetup({
        configPath: join(project, 'router.config.yaml'),
        listenAddr: `127.0.0.1:${routerPort}`,
        env: { CONNECT_RPC_SERVER_LISTEN_ADDR: `127.0.0.1:${connectPort}`, CONNECT_RPC_SERVICES_PATH: join(project, 'services') },
      });
      router = await createRouter({
        config: setup.config,
        plugins: [...setup.plugins, ...(await graphDrivenPlugins(setup.plugins))],
        graph: setup.graph,
        logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
      });
      await router.listen();
    };
    const stop = async () => {
      await router?.close();
      if (service && service.exitCode === null) {
        const exited = new Promise((resolve) => service!.once('exit', resolve));
        service.kill('SIGTERM');
        await exited;
      }
    };
    onTestFinished(stop);

    const send = async (body: string) => {
      const response = await fetch(`http://127.0.0.1:${routerPort}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return response.text();
    };
    const untilServing = async () => {
      const deadline = Date.now() + 30_000;
      while (!(await send('{"query":"{ listProjects { id } }"}').catch(() => '')).startsWith('{"data":{')) {
        if (Date.now() > deadline) throw new Error('the service did not come up');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const follow = async (heading: string) => {
      const steps = exchanges(tutorial.get(heading) ?? []);
      expect(steps.length).toBeGreaterThan(0);
      for (const step of steps) expect({ request: step.request, response: await send(step.request) }).toEqual(step);
    };

    await generate();
    await start();
    await untilServing();
    await follow('4. Query and mutate');

    // 5. Change the schema: the field added to Query, the handler added to projectService.
    const [field, , handler] = (tutorial.get('5. Change the schema') ?? []).filter((block) => block.lang === 'graphql' || block.lang === 'sh' || block.lang === 'ts');
    expect(field?.lang).toBe('graphql');
    expect(handler?.lang).toBe('ts');
    const schemaFile = join(project, 'src/graph/schema.graphql');
    await writeFile(schemaFile, (await readFile(schemaFile, 'utf8')).replace('  listProjects: [Project!]!\n', `  listProjects: [Project!]!\n${field!.code}`));
    const serviceFile = join(project, 'src/service.ts');
    const code = await readFile(serviceFile, 'utf8');
    const at = code.indexOf('return {', code.indexOf('export function projectService')) + 'return {\n'.length;
    await writeFile(serviceFile, code.slice(0, at) + handler!.code + code.slice(at));
    await stop();
    await generate();
    await start();
    await untilServing();
    await follow('5. Change the schema');
  });
});
