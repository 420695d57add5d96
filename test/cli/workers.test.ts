import { request } from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
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

/** One POST on a fresh connection, so the cluster spreads requests over the workers. */
function post(port: number, path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close', ...headers } },
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

describe('switchyard router --workers 2', () => {
  it('spreads requests over workers, invalidates every worker memory cache, and sums metrics on one listener', async () => {
    const [port, invalidationPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const sharedKey = 'a-shared-key-of-at-least-32-characters!';
    await writeFile(
      join(dir, 'router.config.yaml'),
      [
        'version: "1"',
        `listen_addr: "127.0.0.1:${port}"`,
        'execution_config:',
        '  file:',
        '    path: supergraph.graphql',
        'metrics:',
        '  enabled: true',
        `  listen_addr: "127.0.0.1:${metricsPort}"`,
        'response_cache:',
        '  enabled: true',
        '  storage:',
        '    provider: memory',
        '  invalidation:',
        '    endpoint:',
        '      enabled: true',
        `      listen_addr: "127.0.0.1:${invalidationPort}"`,
        `      shared_key: "${sharedKey}"`,
        '',
      ].join('\n'),
    );
    const child = spawnCli(['router', '-c', join(dir, 'router.config.yaml'), '--workers', '2']);
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
      const invalidation = await post(invalidationPort, '/invalidation', JSON.stringify([{ kind: 'subgraph', subgraph: 'library' }]), { authorization: sharedKey });
      expect(invalidation.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 300));
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
