import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type HarnessRun, runHarness } from '../support/run-harness.js';
import { accountsSdl, clashingSdl, createTempDir, reviewsSdl, type TempDir } from './fixtures.js';

const HARNESS = fileURLToPath(new URL('./cli-harness.ts', import.meta.url));

function switchyard(args: string[], { cwd, env = {}, nodeArgs }: { cwd: string; env?: Record<string, string>; nodeArgs?: string[] }): Promise<HarnessRun> {
  return runHarness(HARNESS, args, { cwd, env: { ...process.env, LOG_LEVEL: 'info', ...env }, nodeArgs });
}

/** A project folder with two subgraph schemas and a compose file, removed when the test ends. */
async function project(onTestFinished: (fn: () => Promise<void>) => void): Promise<TempDir> {
  const dir = await createTempDir();
  onTestFinished(() => dir.remove());
  await dir.write('schemas/accounts.graphql', accountsSdl);
  await dir.write('schemas/reviews.graphql', reviewsSdl);
  await dir.write('schemas/clash.graphql', clashingSdl);
  await dir.write(
    'router.compose.yaml',
    `version: 1
subgraphs:
  - {name: accounts, routing_url: "http://127.0.0.1:4001/graphql", schema: {file: schemas/accounts.graphql}}
  - {name: reviews, routing_url: "http://127.0.0.1:4002/graphql", schema: {file: schemas/reviews.graphql}}
`,
  );
  return dir;
}

// Each test starts a real process (node + tsx): run them side by side, with room for a busy machine.
describe.concurrent('switchyard compose', { timeout: 60_000 }, () => {
  it('writes the execution config for a .json output and exits 0', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', 'router.execution.config.json'], { cwd: dir.path });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe('wrote execution config to router.execution.config.json (2 subgraphs: accounts, reviews)\n');
    const config = JSON.parse(await readFile(join(dir.path, 'router.execution.config.json'), 'utf8')) as { version: number; subgraphs: unknown[] };
    expect(config.version).toBe(1);
    expect(config.subgraphs).toEqual([
      { kind: 'graphql', name: 'accounts', url: 'http://127.0.0.1:4001/graphql' },
      { kind: 'graphql', name: 'reviews', url: 'http://127.0.0.1:4002/graphql' },
    ]);
  });

  it('writes the supergraph SDL for a .graphql output', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '--input', 'router.compose.yaml', '--output', 'out/supergraph.graphql'], { cwd: dir.path });
    expect(run.code).toBe(0);
    expect(await readFile(join(dir.path, 'out', 'supergraph.graphql'), 'utf8')).toContain('enum join__Graph');
  });

  it('prints composition errors one per line on stderr and exits 1', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const compose = await dir.write(
      'clash.compose.yaml',
      'version: 1\nsubgraphs:\n  - {name: accounts, routing_url: "http://x/graphql", schema: {file: schemas/accounts.graphql}}\n  - {name: clash, routing_url: "http://y/graphql", schema: {file: schemas/clash.graphql}}\n',
    );
    const run = await switchyard(['compose', '-i', compose, '-o', 'out.json'], { cwd: dir.path });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      `error: composition of ${compose} failed with 2 errors:`,
      expect.stringMatching(/^error: FIELD_TYPE_MISMATCH: /),
      expect.stringMatching(/^error: INVALID_FIELD_SHARING: /),
    ]);
  });

  it('prints every problem of a bad compose file and exits 1, without a stack trace', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const compose = await dir.write('bad.compose.yaml', 'version: 1\nsubgraphs:\n  - name: a\n    schema: {file: x.graphql}\n    introspection: {}\n');
    const run = await switchyard(['compose', '-i', compose, '-o', 'out.json'], { cwd: dir.path });
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toEqual([`error: ${compose}: subgraphs[0] ("a").routing_url: required (string)`]);
    expect(run.stderr).not.toContain('    at ');
  });

  it('adds the stack trace when LOG_LEVEL=debug', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '-i', 'missing.yaml', '-o', 'out.json'], { cwd: dir.path, env: { LOG_LEVEL: 'debug' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: compose file not found: ${join(dir.path, 'missing.yaml')}`);
    expect(run.stderr).toContain('    at ');
  });

  it('exits 2 when -i is missing', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '-o', 'out.json'], { cwd: dir.path });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("error: required option '-i, --input <file>' not specified\n");
  });

  it('exits 2 on an unknown option', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', 'out.json', '--fast'], { cwd: dir.path });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("error: unknown option '--fast'\n");
  });

  it('exits 2 when the output extension names no format, before composing', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '-i', 'missing.yaml', '-o', 'out.yaml'], { cwd: dir.path });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("error: cannot tell the output format of 'out.yaml': use a .json (execution config) or .graphql (supergraph SDL) file\n");
  });

  it('shows help with both output formats and exits 0', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '--help'], { cwd: dir.path });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: switchyard compose [options]');
    expect(run.stdout).toContain('-i, --input <file>');
    expect(run.stdout).toContain('-o, --output <file>');
    expect(run.stdout).toContain('.graphql, .graphqls, .gql');
  });
});

describe('switchyard compose on a graph deeper than composition can follow', () => {
  it('reports a composition error that says so, not a bare stack overflow, exit 1', async () => {
    const dir = await createTempDir();
    try {
      const types = Array.from({ length: 1500 }, (_, i) => `type T${i} @key(fields: "id") { id: ID!${i < 1499 ? ` next: T${i + 1}` : ''} }`);
      await dir.write('chain.graphql', ['extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])', 'type Query { t0: T0 }', ...types].join('\n'));
      await dir.write('router.compose.yaml', 'version: 1\nsubgraphs:\n  - name: chain\n    routing_url: http://127.0.0.1:4001/graphql\n    schema:\n      file: ./chain.graphql\n');
      // A small stack, so the composition library runs out of it on every machine and Node version.
      const run = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', 'out.json'], { cwd: dir.path, nodeArgs: ['--stack-size=300'] });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('COMPOSITION_ERROR: the graph nests types deeper than the composition library can follow');
      expect(run.stderr).not.toContain('Maximum call stack size exceeded');
    } finally {
      await dir.remove();
    }
  });
});
