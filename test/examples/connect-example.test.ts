/**
 * examples/connect/README.md, followed as written on the TypeScript template:
 * the contract files it shows are the template's, `generate:proto` runs as
 * package.json says, every curl command is run with curl and its output
 * compared with the answer the tutorial shows (timestamps aside), the
 * OpenAPI listing is run with node, and the "Add an endpoint" step is done
 * while the router runs. The project's packages come from this checkout
 * (node_modules linked, router in-process as `switchyard router` builds it).
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { composeGraph, writeOutput } from '../../src/compose/index.js';
import { switchyard } from '../grpc/support.js';
import { type Block, initTemplateProject, REPO, sections, startTemplateProject } from '../grpc/template-project.js';

const exec = promisify(execFile);
const TUTORIAL = join(REPO, 'examples/connect/README.md');

/** Timestamps differ from run to run: compared as a placeholder. */
function normalized(text: string): string {
  return text.trim().replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<timestamp>');
}

describe('the Connect tutorial (examples/connect)', () => {
  it('answers every curl command as the tutorial shows, and serves an endpoint added while running', { timeout: 180_000 }, async ({ onTestFinished }) => {
    const tutorial = sections(await readFile(TUTORIAL, 'utf8'));
    const section = (heading: string): Block[] => {
      const blocks = tutorial.get(heading);
      if (!blocks) throw new Error(`the tutorial has no section "${heading}"`);
      return blocks;
    };
    const template = await initTemplateProject(onTestFinished);
    const { path: project, compose, env } = template;
    const connectPort = template.ports.connect;

    // 2. The contract: the file shown is the template's.
    const shownOperation = section('2. The contract').find((block) => block.lang === 'graphql')!;
    expect(await readFile(join(project, 'services/projects/v1/GetProject.graphql'), 'utf8')).toBe(shownOperation.code);

    // 3. Generate: generate:proto as package.json has it, then buf and compose as generate:buf and generate:router do.
    const scripts = (JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const generateProto = async () => {
      const [command, ...args] = scripts['generate:proto']!.split(' ');
      expect(command).toBe('switchyard');
      const result = await switchyard(args, project);
      expect(result.stderr).toBe('');
      return result.stdout;
    };
    const [printed, protoBlock] = section('3. Generate').filter((block) => block.lang === '' || block.lang === 'protobuf');
    expect(normalized(await generateProto()).split('\n')[0]).toBe(normalized(printed!.code));
    expect(await readFile(join(project, 'services/projects/v1/contract.proto'), 'utf8')).toContain(protoBlock!.code);
    expect(scripts['generate:buf']).toBe('buf lint && buf generate');
    await exec('buf', ['lint'], { cwd: project, env });
    await exec('buf', ['generate'], { cwd: project, env });
    await writeOutput(join(project, 'router.execution.config.json'), await composeGraph(compose));

    // 4. Start: the config shown is the template's; the service, and the router as `switchyard router -c router.config.yaml` builds it.
    const shownConfig = section('4. Start').find((block) => block.lang === 'yaml')!;
    expect(await readFile(join(project, 'router.config.yaml'), 'utf8')).toContain(shownConfig.code);
    const running = await startTemplateProject(template);
    onTestFinished(() => running.stop());

    const curl = async (command: string): Promise<string> => {
      const { stdout } = await exec('bash', ['-c', command.replaceAll('localhost:5026', `127.0.0.1:${connectPort}`)], { cwd: project, env });
      return stdout;
    };
    const deadline = Date.now() + 30_000;
    while (!(await curl(`curl -s -G localhost:5026/projects.v1.ProjectsService/ListProjects -d connect=v1 -d encoding=json -d message={}`)).startsWith('{"listProjects"')) {
      if (Date.now() > deadline) throw new Error('the service did not come up');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    /** Runs each curl block of a section and compares its output with the json block after it. */
    const follow = async (heading: string) => {
      const blocks = section(heading);
      let followed = 0;
      for (const [index, block] of blocks.entries()) {
        if (block.lang !== 'sh' || !block.code.startsWith('curl ')) continue;
        const answer = blocks[index + 1];
        expect(answer?.lang, `the answer shown after: ${block.code}`).toBe('json');
        expect({ command: block.code, output: normalized(await curl(block.code)) }).toEqual({ command: block.code, output: normalized(answer!.code) });
        followed += 1;
      }
      expect(followed).toBeGreaterThan(0);
    };
    await follow('5. Call it with POST');
    await follow('6. Call a query with GET');

    // 7. The OpenAPI file: the listing command and what it prints.
    const [listing, listed] = section('7. The OpenAPI file');
    expect(normalized(await curl(listing!.code))).toBe(normalized(listed!.code));

    // 8. Add an endpoint while the router runs.
    const [operation, regenerate] = section('8. Add an endpoint, without a restart');
    expect(operation!.lang).toBe('graphql');
    expect(regenerate!.code.trim()).toBe('npm run generate:proto');
    await writeFile(join(project, 'services/projects/v1/ProjectNames.graphql'), operation!.code);
    expect(await generateProto()).toContain('(Connect contract projects.v1.ProjectsService: CreateProject, GetProject, ListProjects, ProjectNames, UpdateProject)');
    const addedCall = section('8. Add an endpoint, without a restart').find((block) => block.lang === 'sh' && block.code.startsWith('curl '))!;
    const until = Date.now() + 10_000;
    while ((await curl(addedCall.code)).includes('not_found') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    await follow('8. Add an endpoint, without a restart');
  });
});
