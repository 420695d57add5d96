/**
 * examples/grpc-service/README.md, followed as written: every curl command's
 * request is sent and its answer compared with the one the tutorial shows,
 * and the "Change the schema" step is applied from its snippets. The
 * project's packages come from this checkout (node_modules linked, router
 * started in-process as `switchyard router` would), so no install is needed.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { composeGraph, writeOutput } from '../../src/compose/index.js';
import { writeContractFiles } from '../../src/connect/contract-files.js';
import { writeServiceFiles } from '../../src/grpc/service-files.js';
import { type Block, initTemplateProject, REPO, type RunningProject, sections, startTemplateProject } from './template-project.js';

const exec = promisify(execFile);
const TUTORIAL = join(REPO, 'examples/grpc-service/README.md');

interface Exchange {
  readonly request: string;
  readonly response: string;
}

/** Each curl command's JSON body, with the JSON block that follows it. */
function exchanges(blocks: readonly Block[]): Exchange[] {
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
    const template = await initTemplateProject(onTestFinished);
    const { path: project, compose, env } = template;

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
    let running: RunningProject | undefined;
    const start = async () => {
      running = await startTemplateProject(template);
    };
    const stop = async () => {
      await running?.stop();
    };
    onTestFinished(stop);

    const send = async (body: string) => {
      const response = await fetch(`http://127.0.0.1:${template.ports.router}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
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
