/**
 * The npm way in: the package as `npm pack` makes it, installed into an
 * empty folder the way a user installs it, runs `npx switchyard router` on a
 * graph and answers a query; and the tarball ships nothing test-only.
 *
 * The package is this checkout after `npm run build` (or, when its dist/ is
 * older than the sources, the same build made in a folder of its own by
 * builtSwitchyard(), so a shared checkout's dist/ is never rebuilt under
 * other tests). Installing resolves the dependencies from the npm cache when
 * it can (`--prefer-offline`), from the registry otherwise.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { freePort, waitFor } from '../cli/run-cli.js';
import { builtSwitchyard, REPO } from '../examples/checkout-package.js';
import { librarySubgraph, peopleSubgraph } from '../kernel/library-subgraphs.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
/** Quiet npm: no update notice, no funding or audit requests. */
const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

/** What a published package must not carry: this repository's tests, benchmarks, CI and scripts. */
const TEST_ONLY = [
  /^test\//,
  /^bench\//,
  /^\.ci\//,
  /^scripts\//,
  /^examples\//,
  /(^|\/)node_modules\//,
  /^test\/artifacts\//,
  /\.(cpuprofile|log)$/,
  /^vitest\.config\./,
  /^tsconfig\.json$/,
];

interface PackResult {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

function testOnly(paths: readonly string[]): string[] {
  return paths.filter((path) => TEST_ONLY.some((pattern) => pattern.test(path)));
}

/** The processes of a process group, with their command lines (from /proc: no `ps` needed). */
async function processGroup(pgid: number): Promise<Array<{ pid: number; args: string }>> {
  const found: Array<{ pid: number; args: string }> = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, pgrp, ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp !== pgid) continue;
      const args = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').filter(Boolean).join(' ');
      found.push({ pid: Number(entry), args });
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

let dir: string;
let library: TestSubgraph;
let people: TestSubgraph;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-npm-pack-'));
  library = await startSubgraph(librarySubgraph());
  people = await startSubgraph(peopleSubgraph());
});

afterAll(async () => {
  await Promise.all([library?.close(), people?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('the `files` list ships dist, docs, templates and the README, nothing test-only', async () => {
    const { stdout } = await run(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO, env: npmEnv, timeout: 60_000 });
    const [result] = JSON.parse(stdout) as PackResult[];
    const paths = result!.files.map((f) => f.path);
    expect(testOnly(paths)).toEqual([]);
    const tops = new Set(paths.map((path) => path.split('/')[0]));
    expect([...tops].sort()).toEqual(expect.arrayContaining(['README.md', 'docs', 'package.json', 'templates']));
    for (const top of tops) expect(['README.md', 'dist', 'docs', 'package.json', 'templates'], top).toContain(top);
  });

  it('installs into an empty folder and `npx switchyard router` serves a query, then stops on SIGTERM', { timeout: 420_000 }, async () => {
    const pkg = await builtSwitchyard();
    const packDir = join(dir, 'pack');
    const app = join(dir, 'app');
    await mkdir(packDir);
    // An empty folder, as a user starts: npm writes package.json and node_modules there.
    await mkdir(app);
    const { stdout } = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], { cwd: pkg, env: npmEnv, timeout: 120_000 });
    const [packed] = JSON.parse(stdout) as PackResult[];
    const paths = packed!.files.map((f) => f.path);
    expect(testOnly(paths)).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'dist/cli/main.js', 'dist/index.js', 'dist/index.d.ts']));
    const tarball = join(packDir, packed!.filename);

    await run(NPM, ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, env: npmEnv, timeout: 300_000 });
    const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual(['switchyard']);
    const version = (JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    expect((await run(NPX, ['--no-install', 'switchyard', '--version'], { cwd: app, env: npmEnv, timeout: 60_000 })).stdout.trim()).toBe(version);

    const supergraph = join(app, 'supergraph.graphql');
    await writeFile(supergraph, composeSubgraphs([library, people].map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs }))).supergraphSdl);
    const port = await freePort();
    // Its own process group, so cleanup reaches the router under npx whatever happens.
    const child: ChildProcess = spawn(NPX, ['--no-install', 'switchyard', 'router', '--supergraph', supergraph, '--listen-addr', `127.0.0.1:${port}`], {
      cwd: app,
      env: npmEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok, 60_000).catch((error: unknown) => {
        throw new Error(`router did not become ready: ${String(error)}\n${output}`);
      });
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ book(id: "b2") { title author { name } } }' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { book: { title: 'Emma', author: { name: 'Jane Austen' } } } });
      expect(library.calls.length).toBeGreaterThan(0);
      expect(people.calls.length).toBeGreaterThan(0);
      // npx runs the bin through `sh -c` and does not pass SIGTERM on (docs/deployment.md):
      // signal the router process itself, as `exec`/a process manager would; npx exits with its code.
      const group = await processGroup(child.pid!);
      const router = group.find(({ args }) => /^node\b.*node_modules\/\.bin\/switchyard router/.test(args));
      expect(router, JSON.stringify(group)).toBeDefined();
      process.kill(router!.pid, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('Router stopping');
      await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});
