/**
 * `switchyard router` writes its log lines (startup, access logs, plugin
 * lines) as JSON when standard output is a pipe or a file, and as coloured
 * lines for people when it is a terminal: the same router run under
 * `script`, which gives it a pseudo-terminal, and with a plain pipe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';
import { freePort, waitFor } from '../../cli/run-cli.js';
import { productsSubgraph } from './fixtures.js';

// The CLI starts through tsx, which takes seconds on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

const SCRIPT = '/usr/bin/script';
const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
const TSX = new URL('../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

let products: TestSubgraph;
let dir: string;

beforeAll(async () => {
  if (!existsSync(SCRIPT)) throw new Error(`${SCRIPT} is missing: install util-linux (it gives the router a pseudo-terminal here)`);
  products = await startSubgraph(productsSubgraph());
  dir = await mkdtemp(join(tmpdir(), 'switchyard-logs-'));
  const composed = composeSubgraphs([{ name: products.name, url: products.url, sdl: products.typeDefs }]);
  await writeFile(join(dir, 'supergraph.graphql'), composed.supergraphSdl);
});

afterAll(async () => {
  await products?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Run {
  readonly child: ChildProcess;
  readonly port: number;
  output(): string;
}

/** Starts the router with access logs on; `terminal` runs it under `script` (a pseudo-terminal), otherwise stdout is a pipe. */
async function startRouter(terminal: boolean): Promise<Run> {
  const port = await freePort();
  const config = join(dir, `router-${port}.config.yaml`);
  await writeFile(config, `version: "1"\nlisten_addr: "127.0.0.1:${port}"\nexecution_config:\n  file:\n    path: supergraph.graphql\naccess_logs:\n  enabled: true\n`);
  const command = [process.execPath, '--import', TSX, MAIN, 'router', '-c', config];
  const env = { ...process.env, LOG_LEVEL: 'info', TERM: 'xterm-256color' } as NodeJS.ProcessEnv;
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  const child = terminal
    ? // -q: no banner; -f: flush as it comes; -e: the router's exit status; the command's words are quoted for script's shell.
      spawn(SCRIPT, ['-qfec', command.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' '), '/dev/null'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(command[0]!, command.slice(1), { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, port, output: () => output };
}

async function stop(run: Run): Promise<void> {
  if (run.child.exitCode !== null) return;
  const exited = new Promise((resolve) => run.child.once('exit', resolve));
  run.child.kill('SIGTERM');
  await exited;
}

async function query(port: number): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'graphql-client-name': 'terminal-test' },
    body: JSON.stringify({ query: 'query Names { topProducts { name } }' }),
  });
  expect(response.status).toBe(200);
}

/** Waits for the router, sends it one operation, and waits for its access log line. */
async function serveOne(run: Run): Promise<void> {
  await waitFor(async () => run.output().includes('Router listening'));
  await query(run.port);
  await waitFor(async () => run.output().includes('Request completed'), 10_000);
}

describe('router log lines', () => {
  it('are one JSON object per line when stdout is a pipe', async () => {
    const run = await startRouter(false);
    try {
      await serveOne(run);
    } finally {
      await stop(run);
    }
    const lines = run.output().trim().split('\n');
    expect(run.output()).not.toMatch(ANSI);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.find((line) => line.msg === 'Router listening')).toMatchObject({ level: 'info', listen_addr: `127.0.0.1:${run.port}` });
    expect(parsed.find((line) => line.msg === 'Request completed')).toMatchObject({ level: 'info', plugin: 'access-logs', operation_name: 'Names' });
  });

  it('are coloured lines for people when stdout is a terminal', async () => {
    const run = await startRouter(true);
    try {
      await serveOne(run);
    } finally {
      await stop(run);
    }
    const output = run.output();
    expect(output).toMatch(ANSI);
    const lines = output.replace(ANSI, '').replace(/\r/g, '').trim().split('\n');
    // No JSON line at all; each line starts with the time and the level.
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    const listening = lines.find((line) => line.includes('Router listening'))!;
    expect(listening).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Router listening$/);
    const index = lines.indexOf(listening);
    // Fields follow the message, one per line, indented.
    expect(lines.slice(index + 1).some((line) => line.trim() === `listen_addr: "127.0.0.1:${run.port}"`)).toBe(true);
    const access = lines.findIndex((line) => /INFO \(access-logs\): Request completed$/.test(line) || /INFO: Request completed$/.test(line));
    expect(access).toBeGreaterThan(-1);
    expect(lines.slice(access + 1).some((line) => line.trim() === 'operation_name: "Names"')).toBe(true);
  });
});
