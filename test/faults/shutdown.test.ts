import { request } from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
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
