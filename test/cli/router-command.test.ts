import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Each case starts the CLI through tsx, which takes seconds on a busy machine.
vi.setConfig({ testTimeout: 120_000 });
import { composeSubgraphs } from '../../src/compose/compose.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../kernel/library-subgraphs.js';
import { freePort, runCli, spawnCli, waitFor } from './run-cli.js';

let library: TestSubgraph;
let people: TestSubgraph;
let dir: string;
let supergraph: string;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  people = await startSubgraph(peopleSubgraph({ delayMs: 600 }));
  dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
  supergraph = join(dir, 'supergraph.graphql');
  const composed = composeSubgraphs([library, people].map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
  await writeFile(supergraph, composed.supergraphSdl);
});

afterAll(async () => {
  await Promise.all([library?.close(), people?.close()]);
});

async function post(port: number, query: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: await response.json() };
}

describe('switchyard router', () => {
  it('serves a supergraph file and finishes in-flight requests on SIGTERM before exiting 0', async () => {
    const port = await freePort();
    const child = spawnCli(['router', '--supergraph', supergraph, '--listen-addr', `127.0.0.1:${port}`]);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok);
      expect(await post(port, '{ book(id: "b1") { title } }')).toEqual({ status: 200, body: { data: { book: { title: 'Dune' } } } });
      const slow = post(port, '{ book(id: "b2") { author { name } } }');
      await new Promise((resolve) => setTimeout(resolve, 150));
      child.kill('SIGTERM');
      expect(await slow).toEqual({ status: 200, body: { data: { book: { author: { name: 'Jane Austen' } } } } });
      const result = await child.exited;
      expect(result.code).toBe(0);
      const lines = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { msg: string; level: string });
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['Graph loaded', 'Router listening', 'Router stopping: finishing in-flight requests']));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('reads router.config.yaml from the working directory when given neither -c nor --supergraph', async () => {
    const port = await freePort();
    await writeFile(join(dir, 'router.config.yaml'), `version: "1"\nlisten_addr: "127.0.0.1:${port}"\nexecution_config:\n  file:\n    path: supergraph.graphql\n`);
    const child = spawnCli(['router'], { cwd: dir });
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok);
      expect((await post(port, '{ books { id } }')).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await child.exited;
    }
  });

  it('stops at startup with the key path and reason of a bad config, without a stack trace', async () => {
    const config = join(dir, 'bad.yaml');
    await writeFile(config, 'version: "1"\nlisten_addr: 3002\nengine:\n  enable_single_flight: "maybe"\n  surprise: true\n');
    const result = await runCli(['router', '-c', config]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('listen_addr');
    expect(result.stderr).toContain('engine.enable_single_flight');
    expect(result.stderr).toContain('unknown key "surprise"');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('applies environment overrides with the same validation', async () => {
    const result = await runCli(['router', '--supergraph', supergraph], { env: { LISTEN_ADDR: 'not-an-address' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('LISTEN_ADDR');
  });

  it('stops at startup on a graph file that is not a supergraph', async () => {
    const bad = join(dir, 'not-a-supergraph.graphql');
    await writeFile(bad, 'type Query { hello: String }');
    const result = await runCli(['router', '--supergraph', bad]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('join');
  });

  it('exits 2 on a usage error', async () => {
    // One process per case, side by side.
    const results = await Promise.all([runCli(['router', '--workers', 'zero']), runCli(['router', '--nope']), runCli(['nonsense'])]);
    expect(results.map((result) => result.code)).toEqual([2, 2, 2]);
  });

  it('prints help for every command and exits 0', async () => {
    // One process per command, side by side.
    const commands = [[], ['router'], ['compose'], ['plan']];
    const results = await Promise.all(commands.map((command) => runCli([...command, '--help'])));
    for (const [index, result] of results.entries()) {
      expect(result.code, commands[index]!.join(' ')).toBe(0);
      expect(result.stdout, commands[index]!.join(' ')).toContain('Usage: switchyard');
    }
  });
});

describe('switchyard plan', () => {
  it('prints the query plan of an operation file', async () => {
    const operation = join(dir, 'op.graphql');
    await writeFile(operation, 'query Shelf { book(id: "b1") { title author { name } } }');
    const result = await runCli(['plan', '--supergraph', supergraph, '-q', operation]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Fetch(service: "library")');
    expect(result.stdout).toContain('Flatten(path: "book.author")');
  });

  it('refuses an operation with an unknown field or a syntax error: exit 1, file:line:column on stderr, no plan, no stack', async () => {
    const unknown = join(dir, 'unknown-field.graphql');
    await writeFile(unknown, 'query Shelf {\n  book(id: "b1") { title isbn13 }\n}\n');
    const broken = join(dir, 'broken.graphql');
    await writeFile(broken, '{ book(id: "b1") { title }');
    const [unknownResult, brokenResult] = await Promise.all([
      runCli(['plan', '--supergraph', supergraph, '-q', unknown]),
      runCli(['plan', '--supergraph', supergraph, '-q', broken]),
    ]);
    expect(unknownResult).toEqual({ code: 1, stdout: '', stderr: `error: ${unknown}:2:26: Cannot query field "isbn13" on type "Book".\n` });
    expect(brokenResult).toEqual({ code: 1, stdout: '', stderr: `error: ${broken}:1:27: Syntax Error: Expected Name, found <EOF>.\n` });
  });

  it('fails with a clear message for an operation file that does not exist', async () => {
    const result = await runCli(['plan', '--supergraph', supergraph, '-q', join(dir, 'missing.graphql')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('operation file not found');
  });
});
