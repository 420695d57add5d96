/**
 * `switchyard router --workers 2`: the primary's aggregated /metrics across a
 * worker's death and while a worker does not answer, and the workers' log
 * lines (src/kernel/metrics/cluster-metrics.ts, src/kernel/logger.ts).
 */
import { readFile, mkdtemp, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';
import { freePort, spawnCli, waitFor } from './run-cli.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** The primary's scrape bound (cluster-metrics.ts) plus slack for a busy machine; prom-client's own wait was 5 s, then a 500. */
const SCRAPE_BOUND_MS = 1500;
const SCRAPE_DEADLINE_MS = SCRAPE_BOUND_MS + 2500;

let library: TestSubgraph;
let router: ReturnType<typeof spawnCli>;
let port: number;
let metricsPort: number;
const stopped = new Set<number>();

/** One POST on a fresh connection, so the cluster spreads requests over the workers (round robin). */
function post(body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/graphql', method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } },
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

const QUERY = JSON.stringify({ query: '{ book(id: "b1") { title } }' });

async function ask(times: number): Promise<void> {
  for (let i = 0; i < times; i++) expect(await post(QUERY)).toEqual({ status: 200, text: '{"data":{"book":{"title":"Dune"}}}' });
}

interface Scrape {
  readonly status: number;
  readonly ms: number;
  readonly text: string;
  /** `switchyard_operations_total{outcome="ok"}` */
  readonly ok: number;
  /** `switchyard_operation_duration_seconds_count{method="POST",status="200"}` */
  readonly durationCount: number;
  /** `switchyard_operation_duration_seconds_bucket{le="+Inf",method="POST",status="200"}` */
  readonly infBucket: number;
  readonly reporting: number;
}

function value(text: string, series: RegExp): number {
  const match = series.exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

async function scrape(): Promise<Scrape> {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  const text = await res.text();
  return {
    status: res.status,
    ms: Date.now() - started,
    text,
    ok: value(text, /^switchyard_operations_total\{outcome="ok"\} (\d+)$/m),
    durationCount: value(text, /^switchyard_operation_duration_seconds_count\{method="POST",status="200"\} (\d+)$/m),
    infBucket: value(text, /^switchyard_operation_duration_seconds_bucket\{le="\+Inf",method="POST",status="200"\} (\d+)$/m),
    reporting: value(text, /^switchyard_workers_reporting (\d+)$/m),
  };
}

/** Scrapes until `accept` holds; every scrape on the way must answer 200 within the bound. */
async function scrapeUntil(accept: (s: Scrape) => boolean): Promise<Scrape> {
  for (let attempt = 0; ; attempt++) {
    const s = await scrape();
    expect(s.status).toBe(200);
    expect(s.ms).toBeLessThan(SCRAPE_DEADLINE_MS);
    if (accept(s)) return s;
    if (attempt >= 20) throw new Error(`scrape never matched; last:\n${s.text}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The primary's child processes: its workers (Linux). */
async function workerPids(): Promise<number[]> {
  const pid = router.pid!;
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return children
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
}

function listening(): number {
  return (router.output().stdout.match(/"msg":"Router listening"/g) ?? []).length;
}

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-workers-metrics-'));
  const composed = composeSubgraphs([{ name: library.name, url: library.url, sdl: library.typeDefs }]);
  await writeFile(join(dir, 'supergraph.graphql'), composed.supergraphSdl);
  [port, metricsPort] = [await freePort(), await freePort()];
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
      '',
    ].join('\n'),
  );
  router = spawnCli(['router', '-c', join(dir, 'router.config.yaml'), '--workers', '2']);
  // Both workers serving, or one of them takes every request.
  await waitFor(async () => listening() >= 2);
  await waitFor(async () => (await post(JSON.stringify({ query: '{ __typename }' }))).status === 200);
  await waitFor(async () => (await workerPids()).length === 2);
});

afterAll(async () => {
  for (const pid of stopped) process.kill(pid, 'SIGCONT');
  if (router && router.exitCode === null) {
    router.kill('SIGTERM');
    const { code } = await router.exited;
    expect(code).toBe(0);
  }
  await library?.close();
});

describe('switchyard router --workers 2: metrics and logs', () => {
  it('writes which worker wrote each worker log line, and nothing new on the primary', () => {
    const lines = router
      .output()
      .stdout.split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const workers = lines.filter((line) => line.msg === 'Router listening').map((line) => line.worker);
    expect(workers.sort()).toEqual([1, 2]);
    // The primary's own line (the metrics listener) has no worker.
    const primary = lines.find((line) => line.msg === 'Metrics listening');
    expect(primary).toBeDefined();
    expect(primary).not.toHaveProperty('worker');
  });

  it('keeps counters and histograms from going down when a worker is killed and restarted', async () => {
    await ask(20);
    // Both workers answered 10 (round robin); this scrape is what the primary remembers of them.
    const before = await scrapeUntil((s) => s.reporting === 2);
    expect(before.ok).toBeGreaterThanOrEqual(20);
    expect(before.durationCount).toBeGreaterThanOrEqual(20);

    const [victim] = await workerPids();
    process.kill(victim!, 'SIGKILL');
    // The primary starts another worker, which logs once it serves.
    await waitFor(async () => listening() >= 3 && !(await workerPids()).includes(victim!));
    await waitFor(async () => (await workerPids()).length === 2);

    await ask(10);
    const after = await scrapeUntil((s) => s.reporting === 2);
    // The killed worker's requests stay counted: without carrying them the sums dropped by its share (~10).
    expect(after.ok).toBeGreaterThanOrEqual(before.ok + 10);
    expect(after.durationCount).toBeGreaterThanOrEqual(before.durationCount + 10);
    expect(after.infBucket).toBeGreaterThanOrEqual(before.infBucket + 10);
    expect(after.infBucket).toBe(after.durationCount);
  });

  it('answers a scrape in time while a worker is stopped, counting its last values and one worker fewer reporting', async () => {
    await ask(10);
    const before = await scrapeUntil((s) => s.reporting === 2);

    const [frozen] = await workerPids();
    process.kill(frozen!, 'SIGSTOP');
    stopped.add(frozen!);
    // The other worker may itself miss the bound on a busy machine (then 0): scrape again until it answers.
    const during = await scrapeUntil((s) => s.reporting === 1);
    expect(during.ok).toBeGreaterThanOrEqual(before.ok);
    expect(during.durationCount).toBeGreaterThanOrEqual(before.durationCount);
    expect(during.infBucket).toBeGreaterThanOrEqual(before.infBucket);

    process.kill(frozen!, 'SIGCONT');
    stopped.delete(frozen!);
    const resumed = await scrapeUntil((s) => s.reporting === 2);
    expect(resumed.ok).toBeGreaterThanOrEqual(during.ok);
    await ask(4);
    const later = await scrapeUntil((s) => s.reporting === 2);
    expect(later.ok).toBeGreaterThanOrEqual(resumed.ok + 4);
  });
});
