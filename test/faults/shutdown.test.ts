import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { freePort, spawnCli, waitFor } from '../cli/run-cli.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';

vi.setConfig({ testTimeout: 120_000 });

let library: TestSubgraph;
let redis: RedisServer;
let dir: string;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph({ delayMs: 400 }));
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), 'switchyard-shutdown-'));
  await writeFile(join(dir, 'supergraph.graphql'), composeSubgraphs([{ name: library.name, url: library.url, sdl: library.typeDefs }]).supergraphSdl);
});

afterAll(async () => {
  await Promise.all([library?.close(), redis?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Answer = { status: number; text: string } | { error: string };

/** One request on its own connection; `answer` resolves with the whole body, or the error that cut it; `sent` once the request is written. */
function send(port: number, body: string): { answer: Promise<Answer>; sent: Promise<void> } {
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const answer = new Promise<Answer>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/graphql', method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('error', (error) => {
      markSent();
      resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message });
    });
    req.on('finish', markSent);
    req.end(body);
  });
  return { answer, sent };
}

function post(port: number, body: string): Promise<Answer> {
  return send(port, body).answer;
}

describe('graceful shutdown under load', () => {
  it('finishes every in-flight request on SIGTERM, reports not ready, then refuses new connections, closes Redis, and exits 0', async () => {
    const port = await freePort();
    await writeFile(
      join(dir, 'router.config.yaml'),
      [
        'version: "1"',
        `listen_addr: "127.0.0.1:${port}"`,
        'execution_config:',
        '  file:',
        '    path: supergraph.graphql',
        'storage_providers:',
        '  sharedstore:',
        `    - { id: main, urls: ["${redis.url}"] }`,
        'response_cache:',
        '  enabled: true',
        '  storage: { provider: sharedstore, provider_id: main }',
        '',
      ].join('\n'),
    );
    const child = spawnCli(['router', '-c', join(dir, 'router.config.yaml')]);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok);
    const clientsBefore = Number(await redis.cli('CLIENT', 'LIST').then((list) => list.split('\n').filter(Boolean).length));
    expect(clientsBefore).toBeGreaterThan(1);
    const requests = Array.from({ length: 24 }, (_, i) => send(port, JSON.stringify({ query: `{ book(id: "b${(i % 3) + 1}") { title } }` })));
    const inFlight = requests.map((r) => r.answer);
    // In flight means written to the router; on a busy machine that can take a while.
    await Promise.all(requests.map((r) => r.sent));
    await new Promise((resolve) => setTimeout(resolve, 150));
    child.kill('SIGTERM');
    // The router drains for a moment before it stops accepting connections.
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 503, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const late = await post(port, JSON.stringify({ query: '{ books { id } }' }));
    const answers = await Promise.all(inFlight);
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 200 });
      expect(JSON.parse((answer as { text: string }).text).data.book.title).toMatch(/^(Dune|Emma|Ubik)$/);
    }
    expect(late).toEqual({ error: 'ECONNREFUSED' });
    expect((await child.exited).code).toBe(0);
    const clientsAfter = (await redis.cli('CLIENT', 'LIST')).split('\n').filter(Boolean).length;
    expect(clientsAfter).toBe(1);
  });
});

/** Writes a router config for the lifecycle tests (no Redis needed). */
async function lifecycleConfig(port: number, name: string, extra: readonly string[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, ['version: "1"', `listen_addr: "127.0.0.1:${port}"`, 'execution_config:', '  file:', '    path: supergraph.graphql', ...extra, ''].join('\n'));
  return path;
}

/**
 * Load until the listener refuses: `loops` clients each send one request at a
 * time, each on a new connection, until a connection is refused. Every answer
 * is kept with the time it was sent.
 */
function loadUntilRefused(port: number, loops: number): Promise<{ sentAt: number; answer: Answer }[]> {
  const results: { sentAt: number; answer: Answer }[] = [];
  const loop = async () => {
    for (let i = 0; ; i++) {
      const sentAt = Date.now();
      const answer = await post(port, JSON.stringify({ query: `{ book(id: "b${(i % 3) + 1}") { title } }` }));
      results.push({ sentAt, answer });
      if ('error' in answer) return;
    }
  };
  return Promise.all(Array.from({ length: loops }, loop)).then(() => results);
}

describe.each([
  { label: 'one process', workers: [] as string[] },
  { label: '--workers 2', workers: ['--workers', '2'] },
])('shutdown_delay and grace_period ($label)', ({ workers }) => {
  it('flips readiness at once, serves new requests during shutdown_delay, then closes, dropping no request under load', async () => {
    const port = await freePort();
    const config = await lifecycleConfig(port, `lifecycle-${workers.length}.yaml`, ['shutdown_delay: 3s', 'grace_period: 10s']);
    const child = spawnCli(['router', '-c', config, ...workers]);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok);
      // With workers, every worker must be up before the load starts.
      if (workers.length > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
      const load = loadUntilRefused(port, 8);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const signalAt = Date.now();
      child.kill('SIGTERM');
      // Readiness flips well before the delay ends.
      await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/health/ready`, { headers: { connection: 'close' } });
        return res.status === 503;
      }, 1_000);
      expect(Date.now() - signalAt).toBeLessThan(1_500);
      // Still inside the delay: a new connection is accepted and served.
      const duringSentAt = Date.now();
      const during = await post(port, JSON.stringify({ query: '{ book(id: "b1") { title } }' }));
      expect(duringSentAt - signalAt).toBeLessThan(2_000);
      expect(during).toMatchObject({ status: 200 });
      expect(await child.exited.then((r) => r.code)).toBe(0);
      const results = await load;
      const served = results.filter((r) => 'status' in r.answer);
      const failed = results.filter((r) => 'error' in r.answer);
      // Every request the router accepted was answered; the only failures are refused connections after the listener closed.
      for (const r of served) expect(r.answer).toMatchObject({ status: 200 });
      for (const r of failed) {
        expect(r.answer).toEqual({ error: 'ECONNREFUSED' });
        expect(r.sentAt - signalAt).toBeGreaterThanOrEqual(2_900);
      }
      expect(served.filter((r) => r.sentAt > signalAt + 2_000).length).toBeGreaterThan(0);
      expect(failed).toHaveLength(8);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('grace_period', () => {
  it('cuts requests still in flight when grace_period ends, and exits 0', async () => {
    const slowLibrary = await startSubgraph(librarySubgraph({ delayMs: 3_000 }));
    const port = await freePort();
    await writeFile(join(dir, 'slow.graphql'), composeSubgraphs([{ name: slowLibrary.name, url: slowLibrary.url, sdl: slowLibrary.typeDefs }]).supergraphSdl);
    const config = join(dir, 'grace.yaml');
    await writeFile(config, ['version: "1"', `listen_addr: "127.0.0.1:${port}"`, 'execution_config:', '  file:', '    path: slow.graphql', 'grace_period: 100ms', ''].join('\n'));
    const child = spawnCli(['router', '-c', config]);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok);
      // The subgraph takes 3 s; 250 ms drain + 100 ms grace end long before the answer.
      const slow = send(port, JSON.stringify({ query: '{ book(id: "b1") { title } }' }));
      await slow.sent;
      await new Promise((resolve) => setTimeout(resolve, 50));
      child.kill('SIGTERM');
      expect(await slow.answer).toHaveProperty('error');
      expect((await child.exited).code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await slowLibrary.close();
    }
  });
});
