/**
 * The subscription benchmark: many concurrent GraphQL-over-WebSocket
 * subscribers on one router process, each event needing one entity fetch
 * (`Review.product` from the products subgraph). Reports, per router:
 * event latency p50/p99 (subgraph emit to client receipt), router CPU per
 * delivered event, delivered events per router CPU-second, and memory per
 * subscriber (router RSS with the subscribers minus without, divided by
 * their number).
 *
 * It is not a request/response load, so it runs on its own rather than
 * through the HTTP load harness:
 *
 *   npm run bench -- --scenario subscriptions [--subscribers 10000] [--events 20] [--interval-ms 250] [--contenders switchyard,hive-gateway]
 *
 * (bench/run.ts hands `--scenario subscriptions` here; the file also runs
 * by itself with `node --import tsx bench/scenarios/subscriptions.ts`.)
 *
 * The subgraphs and the clients live in the bench process (one clock for
 * emit and receipt); each router is its own process, measured through /proc.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { buildPrograms, REPO_ROOT } from '../harness/build.js';
import { freePort, startProcess, type Started } from '../harness/processes.js';
import { cpuMs, processTree, rssBytes } from '../harness/proc-stats.js';
import { now, PRODUCTS_SDL, REVIEWS_SDL, startBenchSubgraphs, type BenchSubgraphs } from '../servers/subscription-subgraphs.js';

const QUERY = 'subscription { reviewAdded { id emittedAt product { upc name } } }';

interface RouterResult {
  readonly id: string;
  readonly subscribers: number;
  readonly upstreams: number;
  readonly delivered: number;
  readonly expected: number;
  readonly p50Ms: number | undefined;
  readonly p99Ms: number | undefined;
  readonly cpuMsPerEvent: number;
  readonly eventsPerCpuSecond: number;
  readonly bytesPerSubscriber: number;
}

/** One graphql-transport-ws client with one subscription; records each event's latency. */
class Subscriber {
  readonly socket: WebSocket;
  received = 0;
  failed: string | undefined;

  constructor(url: string, latencies: number[], ready: () => void) {
    this.socket = new WebSocket(url, 'graphql-transport-ws');
    this.socket.on('open', () => this.socket.send('{"type":"connection_init"}'));
    this.socket.on('message', (data: Buffer) => {
      const text = data.toString();
      if (text.includes('"connection_ack"')) {
        this.socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY } }));
        ready();
        return;
      }
      // A regular expression, not JSON.parse: the clients share the bench process with the subgraphs.
      const emitted = /"emittedAt":([0-9.e+]+)/.exec(text);
      if (emitted && text.includes('"name"')) {
        this.received++;
        // Only measured events (ids e<n>) count; warm-up events (warm<n>) only mark the subscriber as joined.
        if (text.includes('"id":"e')) latencies.push(now() - Number(emitted[1]));
      } else if (!text.includes('"pong"') && !text.includes('"ping"')) this.failed ??= text.slice(0, 300);
    });
    this.socket.on('error', (error) => (this.failed ??= error.message));
  }

  close(): void {
    this.socket.terminate();
  }
}

function quantile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function ready(port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`router on ${port} not ready`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function measure(
  id: string,
  started: Started,
  port: number,
  subgraphs: BenchSubgraphs,
  options: { subscribers: number; events: number; intervalMs: number },
): Promise<RouterResult> {
  await ready(port);
  const pids = (): number[] => processTree(started.pid);
  const rssBefore = rssBytes(pids());
  const latencies: number[] = [];
  const subscribers: Subscriber[] = [];
  let acked = 0;
  // Connect in batches: thousands of simultaneous handshakes measure the accept queue, not subscriptions.
  for (let i = 0; i < options.subscribers; i += 250) {
    const batch = Math.min(250, options.subscribers - i);
    const target = acked + batch;
    for (let j = 0; j < batch; j++) subscribers.push(new Subscriber(`ws://127.0.0.1:${port}/graphql`, latencies, () => acked++));
    await until(() => acked >= target || subscribers.some((s) => s.failed), 60_000, `${id}: connection_ack`);
    const failed = subscribers.find((s) => s.failed);
    if (failed) throw new Error(`${id}: a subscriber failed: ${failed.failed}`);
  }
  // Warm-up events until every subscriber received one (each has joined its subscription), then settle.
  // One event at a time, so a slow router does not build a backlog that the measured events would queue behind.
  for (let n = 0; subscribers.some((s) => s.received === 0); n++) {
    if (n > 60) throw new Error(`${id}: subscribers did not all receive the warm-up events`);
    subgraphs.emit(`warm${n}`);
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && subscribers.some((s) => s.received <= n)) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The warm-up backlog drains before measuring: no event received for a second.
  let seen = -1;
  const receivedNow = (): number => subscribers.reduce((sum, s) => sum + s.received, 0);
  while (receivedNow() !== seen) {
    seen = receivedNow();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const rssWith = rssBytes(pids());
  const upstreams = subgraphs.open();
  latencies.length = 0;
  for (const s of subscribers) s.received = 0;

  const cpuBefore = cpuMs(pids());
  for (let n = 0; n < options.events; n++) {
    subgraphs.emit(`e${n}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
  }
  const expected = options.events * subscribers.length;
  await until(() => latencies.length >= expected, 60_000, `${id}: delivery`).catch(() => undefined);
  const cpu = cpuMs(pids()) - cpuBefore;
  const delivered = latencies.length;
  for (const s of subscribers) s.close();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    id,
    subscribers: subscribers.length,
    upstreams,
    delivered,
    expected,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    cpuMsPerEvent: delivered > 0 ? cpu / delivered : Number.NaN,
    eventsPerCpuSecond: cpu > 0 ? delivered / (cpu / 1000) : Number.NaN,
    bytesPerSubscriber: (rssWith - rssBefore) / subscribers.length,
  };
}

/** Runs the benchmark with command-line arguments (`--scenario subscriptions` is accepted and ignored). */
export async function runSubscriptionBench(argv: readonly string[]): Promise<void> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      scenario: { type: 'string' },
      subscribers: { type: 'string', default: '10000' },
      events: { type: 'string', default: '20' },
      'interval-ms': { type: 'string', default: '250' },
      contenders: { type: 'string', default: 'switchyard,hive-gateway' },
    },
  });
  const options = { subscribers: Number(values.subscribers), events: Number(values.events), intervalMs: Number(values['interval-ms']) };
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  }
  // Inside the repository (as the HTTP bench's work folder), so the built CLI finds node_modules.
  const base = join(REPO_ROOT, 'bench', '.work');
  await mkdir(base, { recursive: true });
  const work = await mkdtemp(join(base, 'subscriptions-'));
  const programs = await buildPrograms(join(work, 'build'));
  const subgraphs = await startBenchSubgraphs();
  const composed = composeSubgraphs([
    { name: 'reviews', url: subgraphs.reviewsUrl, sdl: REVIEWS_SDL },
    { name: 'products', url: subgraphs.productsUrl, sdl: PRODUCTS_SDL },
  ]);
  const supergraphFile = join(work, 'supergraph.graphql');
  await writeFile(supergraphFile, composed.supergraphSdl);
  const configFile = join(work, 'router.config.yaml');
  // Room for every subscriber; the subgraph is subscribed over WebSocket at its routing URL (the default).
  await writeFile(configFile, ['version: "1"', 'log_level: warn', 'subscriptions:', `  max_total: ${options.subscribers * 2}`, ''].join('\n'));

  const contenders: Record<string, (port: number) => { command: string; args: string[] }> = {
    switchyard: (port) => ({
      command: process.execPath,
      args: [programs.switchyardCli, 'router', '-c', configFile, '--supergraph', supergraphFile, '--listen-addr', `127.0.0.1:${port}`],
    }),
    'hive-gateway': (port) => ({
      command: process.execPath,
      args: [
        join(REPO_ROOT, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js'),
        'supergraph',
        supergraphFile,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--fork',
        '1',
      ],
    }),
  };
  const results: RouterResult[] = [];
  try {
    for (const id of values.contenders.split(',')) {
      const launch = contenders[id];
      if (!launch) throw new Error(`unknown contender ${id}`);
      const port = await freePort();
      const { command, args } = launch(port);
      const started = startProcess({
        command,
        args,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn' },
        cwd: work,
        logFile: join(work, `${id}.log`),
      });
      try {
        const result = await measure(id, started, port, subgraphs, options);
        results.push(result);
        console.log(JSON.stringify(result));
      } catch (error) {
        console.log(`${id}: ${error instanceof Error ? error.message : String(error)}\n${started.tail()}`);
      } finally {
        await started.stop();
        await until(() => subgraphs.open() === 0, 10_000, 'subgraph subscriptions closed').catch(() => undefined);
      }
    }
  } finally {
    await subgraphs.close();
  }
  console.log(`\n${options.subscribers} subscribers, ${options.events} events every ${options.intervalMs} ms, one entity fetch per event\n`);
  console.log('| router | subgraph subscriptions | delivered | p50 latency | p99 latency | router CPU per event | events per CPU-second | memory per subscriber |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.id} | ${r.upstreams} | ${r.delivered}/${r.expected} | ${r.p50Ms?.toFixed(1)} ms | ${r.p99Ms?.toFixed(1)} ms | ${(r.cpuMsPerEvent * 1000).toFixed(1)} µs | ${Math.round(r.eventsPerCpuSecond)} | ${(r.bytesPerSubscriber / 1024).toFixed(1)} KiB |`,
    );
  }
  const [ours, theirs] = [results.find((r) => r.id === 'switchyard'), results.find((r) => r.id === 'hive-gateway')];
  if (ours && theirs) {
    const ratio = ours.eventsPerCpuSecond / theirs.eventsPerCpuSecond;
    console.log(`\nSwitchyard >= 3x Hive Gateway (delivered events per CPU-second): ${ratio.toFixed(2)}x ${ratio >= 3 ? 'met' : 'NOT met'}`);
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  await runSubscriptionBench(process.argv.slice(2));
  process.exit(0);
}
