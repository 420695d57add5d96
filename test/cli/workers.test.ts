import { Agent, request } from 'node:http';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';
import { freePort, spawnCli, waitFor } from './run-cli.js';

vi.setConfig({ testTimeout: 120_000 });

let library: TestSubgraph;
let dir: string;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph({ reply: () => ({ headers: { 'cache-control': 'public, max-age=300' } }) }));
  dir = await mkdtemp(join(tmpdir(), 'switchyard-workers-'));
  const composed = composeSubgraphs([{ name: library.name, url: library.url, sdl: library.typeDefs }]);
  await writeFile(join(dir, 'supergraph.graphql'), composed.supergraphSdl);
});

afterAll(async () => {
  await library?.close();
});

/** One POST, on a fresh connection (so the cluster spreads requests over the workers) unless an agent is given. */
function post(port: number, path: string, body: string, headers: Record<string, string> = {}, agent?: Agent): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: agent ?? false,
        headers: { 'content-type': 'application/json', ...(agent ? {} : { connection: 'close' }), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const SHARED_KEY = 'a-shared-key-of-at-least-32-characters!';

/** Writes `<name>.config.yaml` in the test directory: the graph, listen_addr, and metrics / a memory cache with its invalidation endpoint when their ports are given. */
async function writeConfig(name: string, ports: { port: number; metricsPort?: number; invalidationPort?: number }): Promise<string> {
  const lines = ['version: "1"', `listen_addr: "127.0.0.1:${ports.port}"`, 'execution_config:', '  file:', '    path: supergraph.graphql'];
  if (ports.metricsPort !== undefined) lines.push('metrics:', '  enabled: true', `  listen_addr: "127.0.0.1:${ports.metricsPort}"`);
  if (ports.invalidationPort !== undefined) {
    lines.push('response_cache:', '  enabled: true', '  storage:', '    provider: memory', '  invalidation:', '    endpoint:', '      enabled: true');
    lines.push(`      listen_addr: "127.0.0.1:${ports.invalidationPort}"`, `      shared_key: "${SHARED_KEY}"`);
  }
  const file = join(dir, `${name}.config.yaml`);
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

describe('switchyard router --workers 2', () => {
  it('spreads requests over workers, invalidates every worker memory cache, and sums metrics on one listener', async () => {
    const [port, invalidationPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const config = await writeConfig('router', { port, metricsPort, invalidationPort });
    const child = spawnCli(['router', '-c', config, '--workers', '2']);
    try {
      // Both workers must be serving, or one of them takes every request.
      await waitFor(async () => (child.output().stdout.match(/"msg":"Router listening"/g) ?? []).length >= 2);
      await waitFor(async () => (await post(port, '/graphql', JSON.stringify({ query: '{ __typename }' }))).status === 200);
      const query = JSON.stringify({ query: '{ book(id: "b1") { title } }' });
      const ask = async (times: number) => {
        for (let i = 0; i < times; i++) expect(await post(port, '/graphql', query)).toEqual({ status: 200, text: '{"data":{"book":{"title":"Dune"}}}' });
      };
      library.reset();
      await ask(20);
      // Each worker misses once, then answers from its own memory cache.
      expect(library.calls).toHaveLength(2);
      const invalidation = await post(invalidationPort, '/invalidation', JSON.stringify([{ kind: 'subgraph', subgraph: 'library' }]), { authorization: SHARED_KEY });
      expect(invalidation.status).toBe(202);
      // No wait: the 202 comes once every worker dropped its copies (the next test checks exactly that).
      library.reset();
      await ask(20);
      expect(library.calls).toHaveLength(2);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const operations = /switchyard_operations_total\{outcome="ok"\} (\d+)/.exec(metrics)?.[1];
      expect(Number(operations)).toBeGreaterThanOrEqual(41);
    } finally {
      child.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    }
  });
});

describe('switchyard router --workers 2: delivery, start-up failures, stops', () => {
  it('answers an invalidation 202 only once every worker dropped its copies', async () => {
    const [port, invalidationPort] = [await freePort(), await freePort()];
    const config = await writeConfig('invalidation', { port, invalidationPort });
    const child = spawnCli(['router', '-c', config, '--workers', '2']);
    // Keep-alive connections, spread over both workers by the primary as they open: requests on them never
    // pass through the primary, so nothing orders them after the primary's message to the other worker.
    const agent = new Agent({ keepAlive: true, maxSockets: 6 });
    try {
      await waitFor(async () => (child.output().stdout.match(/"msg":"Router listening"/g) ?? []).length >= 2);
      const query = JSON.stringify({ query: '{ books { id } }' });
      const everyConnection = async (): Promise<number[]> =>
        Promise.all(
          Array.from({ length: 6 }, async () => {
            const answer = await post(port, '/graphql', query, {}, agent);
            expect(answer.status).toBe(200);
            return (JSON.parse(answer.text) as { data: { books: unknown[] } }).data.books.length;
          }),
        );
      let books = (await everyConnection())[0]!;
      for (let trial = 0; trial < 20; trial++) {
        // A new book, straight at the subgraph: the cached lists are now stale.
        const added = await post(Number(new URL(library.url).port), new URL(library.url).pathname, JSON.stringify({ query: `mutation { addBook(title: "T${trial}") { id } }` }));
        expect(added.status).toBe(200);
        books++;
        const invalidation = await post(invalidationPort, '/invalidation', JSON.stringify([{ kind: 'subgraph', subgraph: 'library' }]), { authorization: SHARED_KEY });
        expect(invalidation.status).toBe(202);
        expect(await everyConnection(), `trial ${trial}`).toEqual(Array(6).fill(books));
      }
    } finally {
      agent.destroy();
      child.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    }
  });

  it('stops with exit code 1 when a worker cannot start, as one process would', async () => {
    // The port is taken: every worker's listen fails.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const child = spawnCli(['router', '--supergraph', join(dir, 'supergraph.graphql'), '--listen-addr', `127.0.0.1:${port}`, '--workers', '2']);
      // A router that does not stop on its own is stopped (its primary passes SIGTERM on to its workers).
      const deadline = setTimeout(() => child.kill('SIGTERM'), 60_000);
      const result = await child.exited.finally(() => clearTimeout(deadline));
      expect(result.code).toBe(1);
      expect(result.stderr.match(/worker \d+ could not start \(1\)/g) ?? []).toHaveLength(2);
      expect(result.stderr).toMatch(/no worker could start; stopping the router/);
      // Not started again and again: no worker beyond the two it began with.
      expect(result.stderr.match(/starting another/g) ?? []).toHaveLength(0);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('goes on serving when one worker cannot start but another does, and starts that one again', async () => {
    const port = await freePort();
    // A plugin that fails in the second worker only (node:cluster numbers workers from 1; a replacement gets a new id),
    // while the first is still starting.
    await writeFile(
      join(dir, 'fails-in-worker-2.mjs'),
      [
        "import cluster from 'node:cluster';",
        "import { readFileSync, renameSync, writeFileSync } from 'node:fs';",
        "const marker = new URL('./worker-2.pid', import.meta.url);",
        // Worker 2's process is gone once the primary reaped it, and the primary handles its exit as it reaps it.
        'const worker2Gone = () => {',
        '  try {',
        "    process.kill(Number(readFileSync(marker, 'utf8')), 0);",
        '    return false;',
        '  } catch (error) {',
        "    return error.code === 'ESRCH';",
        '  }',
        '};',
        'export default {',
        '  configure: () => ({',
        "    name: 'fails-in-worker-2',",
        '    async setup() {',
        '      if (cluster.worker?.id === 2) {',
        "        writeFileSync(new URL('./worker-2.pid.tmp', import.meta.url), String(process.pid));",
        "        renameSync(new URL('./worker-2.pid.tmp', import.meta.url), marker);",
        "        throw new Error('worker 2 cannot start');",
        '      }',
        // Worker 1 starts once the primary saw worker 2 fail: worker 2 has failed before any worker serves.
        '      if (cluster.worker?.id === 1) {',
        '        const deadline = Date.now() + 30_000;',
        '        while (!worker2Gone() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));',
        '      }',
        '    },',
        '  }),',
        '};',
        '',
      ].join('\n'),
    );
    const config = await writeConfig('one-fails', { port });
    await writeFile(config, `${await readFile(config, 'utf8')}plugins:\n  - package: ./fails-in-worker-2.mjs\n`);
    const child = spawnCli(['router', '-c', config, '--workers', '2']);
    try {
      // The replacement of the worker that failed serves beside the first.
      await waitFor(async () => (child.output().stdout.match(/"msg":"Router listening"/g) ?? []).length >= 2, 60_000);
      expect(child.output().stderr).toMatch(/worker \d+ could not start \(1\)/);
      expect(child.output().stderr).toMatch(/a worker that could not start; starting another in \d+ ms/);
      expect(child.output().stderr).not.toMatch(/no worker could start/);
      expect((await post(port, '/graphql', JSON.stringify({ query: '{ __typename }' }))).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    }
  });

  it('stops on SIGTERM while every worker is dead and waiting to be started again', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const config = await writeConfig('metrics', { port, metricsPort });
    // The primary's metrics listener keeps its process alive by itself: only the primary's own exit ends it.
    const child = spawnCli(['router', '-c', config, '--workers', '2']);
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
    try {
      await waitFor(async () => (child.output().stdout.match(/"msg":"Router listening"/g) ?? []).length >= 2);
      const workers = (await readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')).trim().split(/\s+/).map(Number);
      expect(workers).toHaveLength(2);
      for (const pid of workers) process.kill(pid, 'SIGKILL');
      // Both restarts now wait out their delay (100 ms, then 200 ms): the stop comes in between.
      await waitFor(async () => (child.output().stderr.match(/starting another in/g) ?? []).length >= 2, 10_000);
      child.kill('SIGTERM');
      const result = await child.exited;
      expect(result.code).toBe(0);
      expect(result.stderr).not.toMatch(/could not start/);
    } finally {
      clearTimeout(deadline);
    }
  });
});
