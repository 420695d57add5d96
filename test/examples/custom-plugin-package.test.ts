/**
 * examples/custom-plugin as its users get it: a package built against this
 * checkout (installed as `switchyard`), whose own typecheck, tests and build
 * pass, and which the `switchyard router` command loads by package name from
 * router.config.yaml. Also what startup says about bad plugin entries.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeOutput } from '../../src/compose/write-output.js';
import { composeSubgraphs } from '../../src/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { freePort, waitFor } from '../cli/run-cli.js';
import { REPO, builtSwitchyard, linkPackages } from './checkout-package.js';
import { PACKAGE_TOOLS, packageTestResults, runPackageScript } from './package-tools.js';

const exec = promisify(execFile);
const PACKAGE = 'switchyard-plugin-client-rate-limit';

let work: string;
let switchyard: string;
let plugin: string;
let project: string;
let inventory: TestSubgraph;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'switchyard-custom-plugin-'));
  switchyard = await builtSwitchyard();
  plugin = join(work, PACKAGE);
  for (const item of ['src', 'test', 'package.json', 'tsconfig.json', 'tsup.config.ts', 'vitest.config.ts', 'README.md']) {
    await cp(join(REPO, 'examples/custom-plugin', item), join(plugin, item), { recursive: true });
  }
  await linkPackages(plugin, switchyard, PACKAGE_TOOLS);

  // A router project: the plugin installed next to router.config.yaml, a graph of one subgraph.
  project = join(work, 'router-project');
  await mkdir(join(project, 'node_modules'), { recursive: true });
  await linkPackages(project, switchyard, []);
  await symlink(plugin, join(project, 'node_modules', PACKAGE), 'dir');
  inventory = await startSubgraph({
    name: 'inventory',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        stock(sku: ID!): Int!
      }
    `,
    resolvers: { Query: { stock: () => 7 } },
  });
  await writeOutput(join(project, 'graph.json'), composeSubgraphs([{ name: inventory.name, url: inventory.url, sdl: inventory.typeDefs }]));
}, 300_000);

afterAll(async () => {
  await inventory?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Writes a router.config.yaml with these `plugins` lines and returns its path. */
async function routerConfig(name: string, port: number, plugins: string): Promise<string> {
  const path = join(project, name);
  await writeFile(path, `version: "1"\nlisten_addr: "127.0.0.1:${port}"\nexecution_config:\n  file:\n    path: graph.json\n    watch: false\nplugins:\n${plugins}`);
  return path;
}

/** `switchyard router -c <config>` from the built package, as `npx switchyard` runs it. */
function switchyardRouter(config: string): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [join(switchyard, 'dist/cli/main.js'), 'router', '-c', config], {
    cwd: project,
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return Object.assign(child, { output: () => output });
}

async function failedStartup(config: string): Promise<{ code: number | null; stderr: string }> {
  const result = await exec(process.execPath, [join(switchyard, 'dist/cli/main.js'), 'router', '-c', config], { cwd: project }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number | null; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  return result;
}

describe('examples/custom-plugin as an npm package', () => {
  it('type-checks, passes its own tests and builds against this checkout', { timeout: 180_000 }, async () => {
    await runPackageScript(plugin, 'typecheck');
    await runPackageScript(plugin, 'test');
    const tests = await packageTestResults(plugin);
    expect(tests.length).toBeGreaterThanOrEqual(9);
    expect(tests.filter((test) => test.status !== 'passed')).toEqual([]);
    await runPackageScript(plugin, 'build');
    const types = await readFile(join(plugin, 'dist/index.d.ts'), 'utf8');
    expect(types).toMatch(/declare const useClientRateLimit: (switchyard\.)?PluginFactory</);
    expect(types).toContain("from 'switchyard'");
    const code = await readFile(join(plugin, 'dist/index.js'), 'utf8');
    expect(code).toMatch(/from "switchyard"/);
    expect(code).not.toContain('definePlugin = ');
  });

  it('is loaded by package name from router.config.yaml and limits clients', { timeout: 60_000 }, async ({ onTestFinished }) => {
    const port = await freePort();
    const config = await routerConfig('router.config.yaml', port, `  - package: ${PACKAGE}\n    options:\n      requests: 2\n      window: 1m\n`);
    const router = switchyardRouter(config);
    onTestFinished(() => void router.kill('SIGTERM'));
    const base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/health/ready`)).ok, 30_000);
    const ask = () =>
      fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'graphql-client-name': 'web' },
        body: JSON.stringify({ query: '{ stock(sku: "a") }' }),
      });
    const first = await ask();
    expect([first.status, await first.json(), first.headers.get('ratelimit-remaining')]).toEqual([200, { data: { stock: 7 } }, '1']);
    await ask();
    const refused = await ask();
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe('RATE_LIMITED');
    const lines = router
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', plugin: 'client-rate-limit', msg: 'Client rate limit enabled', requests: 2, window: '1m', clients: 0 }));
  });

  it('stops startup naming the plugin and the key when its options are bad', async () => {
    const config = await routerConfig('bad-options.yaml', 3999, `  - package: ${PACKAGE}\n    options:\n      requests: 0\n      burst: 3\n`);
    const { code, stderr } = await failedStartup(config);
    expect(code).toBe(1);
    expect(stderr).toMatch(/\[client-rate-limit\] plugins\[0\]\.options\.requests: .*at least 1/);
    expect(stderr).toContain('[client-rate-limit] plugins[0].options: unknown key "burst"');
    expect(stderr).not.toMatch(/\bat .+:\d+:\d+/);
  });

  it('stops startup when a plugin package is not installed, or has no definePlugin default export', async () => {
    const missing = await routerConfig('missing.yaml', 3999, `  - package: switchyard-plugin-nowhere\n`);
    expect(await failedStartup(missing)).toEqual({
      code: 1,
      stderr: expect.stringContaining('plugins[0].package: cannot find package "switchyard-plugin-nowhere" (install it next to the config file)'),
    });
    const notPlugin = join(project, 'node_modules', 'not-a-plugin');
    await mkdir(notPlugin, { recursive: true });
    await writeFile(join(notPlugin, 'package.json'), JSON.stringify({ name: 'not-a-plugin', type: 'module', main: 'index.js' }));
    await writeFile(join(notPlugin, 'index.js'), 'export const answer = 42;\nexport default { name: "not-a-plugin" };\n');
    const wrong = await routerConfig('not-a-plugin.yaml', 3999, `  - package: ${PACKAGE}\n  - package: not-a-plugin\n`);
    expect(await failedStartup(wrong)).toEqual({
      code: 1,
      stderr: expect.stringContaining('plugins[1].package: "not-a-plugin" has no default export made with definePlugin()'),
    });
  });

  it('refuses the same plugin listed twice at startup', async () => {
    const twice = await routerConfig('twice.yaml', await freePort(), `  - package: ${PACKAGE}\n  - package: ${PACKAGE}\n    options:\n      requests: 5\n`);
    const { code, stderr } = await failedStartup(twice);
    expect(code).toBe(1);
    expect(stderr).toContain('two plugins are named "client-rate-limit"; plugin names must be unique');
  });
});
