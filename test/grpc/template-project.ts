/**
 * The TypeScript service template as a tutorial's reader has it: initialised
 * in a temporary folder, its packages linked from this checkout (no install),
 * the service started as `npm start` does and the router in-process as
 * `switchyard router -c router.config.yaml` builds it. Also reads a
 * tutorial's fenced code blocks.
 */
import { spawn } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { graphDrivenPlugins } from '../../src/cli/builtin-plugins.js';
import { initProject } from '../../src/grpc/templates.js';
import { createLogger, createRouter, type Router } from '../../src/index.js';
import { loadRouterSetup } from '../../src/setup/index.js';
import { freePort, tempDir } from './support.js';

export const REPO = join(import.meta.dirname, '../..');

/** A fenced code block: its language tag ('' for none) and its text. */
export interface Block {
  readonly lang: string;
  readonly code: string;
}

/** A tutorial's sections by `## ` heading, each with its fenced code blocks in order. */
export function sections(markdown: string): Map<string, Block[]> {
  const result = new Map<string, Block[]>();
  for (const part of markdown.split(/^## /m).slice(1)) {
    const heading = part.slice(0, part.indexOf('\n'));
    result.set(
      heading,
      [...part.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, code: match[2]! })),
    );
  }
  return result;
}

export interface TemplateProject {
  /** The project folder. */
  readonly path: string;
  /** Its router.compose.yaml, whose subgraph points at `ports.service`. */
  readonly compose: string;
  /** Free loopback ports: the service's, the router's GraphQL listener and its Connect listener. */
  readonly ports: { readonly service: number; readonly router: number; readonly connect: number };
  /** The environment for its tools: this checkout's node_modules/.bin first on PATH. */
  readonly env: NodeJS.ProcessEnv;
}

/** Initialises the TypeScript template in a temporary folder removed when the test ends. */
export async function initTemplateProject(onTestFinished: (fn: () => Promise<void>) => void): Promise<TemplateProject> {
  const path = join(await tempDir(onTestFinished), 'projects-service');
  await initProject({ template: 'typescript', directory: path });
  await symlink(join(REPO, 'node_modules'), join(path, 'node_modules'), 'dir');
  const ports = { service: await freePort(), router: await freePort(), connect: await freePort() };
  const compose = join(path, 'router.compose.yaml');
  await writeFile(compose, (await readFile(compose, 'utf8')).replace('localhost:50051', `127.0.0.1:${ports.service}`));
  const env = { ...process.env, PATH: `${join(REPO, 'node_modules/.bin')}:${process.env.PATH ?? ''}` };
  return { path, compose, ports, env };
}

/** The project's service and router, running. */
export interface RunningProject {
  readonly router: Router;
  /** Closes the router and ends the service; once only, later calls do nothing. */
  stop(): Promise<void>;
}

/**
 * Starts the service (`src/index.ts` with tsx, as `npm start` does) and the
 * router from the project's router.config.yaml, composed graph and services
 * folder. The caller stops them (also when the test fails).
 */
export async function startTemplateProject(project: TemplateProject): Promise<RunningProject> {
  const { path, ports, env } = project;
  const service = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], {
    cwd: path,
    env: { ...env, PORT: String(ports.service), HOST: '127.0.0.1' },
    stdio: 'ignore',
  });
  let router: Router | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await router?.close();
      if (service.exitCode === null && service.signalCode === null) {
        const exited = new Promise((resolve) => service.once('exit', resolve));
        service.kill('SIGTERM');
        await exited;
      }
    })());
  try {
    // The services folder would be found from the working directory (the repository's, in tests): named here.
    const setup = await loadRouterSetup({
      configPath: join(path, 'router.config.yaml'),
      listenAddr: `127.0.0.1:${ports.router}`,
      env: { CONNECT_RPC_SERVER_LISTEN_ADDR: `127.0.0.1:${ports.connect}`, CONNECT_RPC_SERVICES_PATH: join(path, 'services') },
    });
    router = await createRouter({
      config: setup.config,
      plugins: [...setup.plugins, ...(await graphDrivenPlugins(setup.plugins))],
      graph: setup.graph,
      logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
    });
    await router.listen();
  } catch (error) {
    await stop();
    throw error;
  }
  return { router, stop };
}
