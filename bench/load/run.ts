/**
 * `npm run load`: a bounded load test of the router as users run it (its
 * own process, the production settings, Redis behind the response cache,
 * persisted operations and the Connect listener on), on loopback only,
 * with a hostile mix beside the valid traffic (hostile.ts). It ends by
 * itself and exits 1 when a check fails. See docs/operations.md.
 *
 *   npm run load                      # 60 s at 256 connections, plus 256 hostile ones
 *   npm run load -- --duration 10     # shorter
 *   npm run load -- --connections 64  # 64 valid and 64 hostile
 *   npm run load -- --no-hostile      # the valid traffic alone
 *   npm run load -- --replicas 3      # three replicas sharing invalidations through one Redis (replicas.ts)
 */
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startRedis } from '../../test/support/redis.js';
import { readLoadArgs, USAGE } from './args.js';
import { hostileRequests, startSocketAttacks, type SocketAttackStats } from './hostile.js';
import { CACHED_QUERY, CONNECT_PATH, PERSISTED_HASH, SLOW_QUERY, startLoadGraph, UNCACHED_QUERY, UPCS, writeRouterFiles, type LoadGraph } from './graph.js';
import { runReplicas } from './replicas.js';
import { startRouterProcess, waitReady, type RouterProcess } from './router-process.js';

const SHARED_KEY = 'load-test-shared-key-0123456789abcdef';
const IN_FLIGHT_AT_SHUTDOWN = 64;

/** What one kind of request got back. */
interface KindStats {
  total: number;
  /** Count by HTTP status. */
  statuses: Record<number, number>;
  /** Answers with the expected status but not the expected body. */
  wrongBodies: number;
  /** One example of a wrong answer, for the report. */
  example?: string;
}

const stats = new Map<string, KindStats>();
let unhandledInLoadProcess = 0;
process.on('unhandledRejection', (reason) => {
  unhandledInLoadProcess++;
  console.error('unhandled rejection in the load process:', reason);
});

function record(kind: string, status: number, good: boolean, body: string): void {
  let entry = stats.get(kind);
  if (!entry) stats.set(kind, (entry = { total: 0, statuses: {}, wrongBodies: 0 }));
  entry.total++;
  entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
  if (!good) {
    entry.wrongBodies++;
    entry.example ??= `${status} ${body.slice(0, 200)}`;
  }
}

/** A GraphQL-over-HTTP body answered with data and no errors. */
function hasDataOnly(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { data?: unknown; errors?: unknown };
    return parsed.data !== null && parsed.data !== undefined && parsed.errors === undefined;
  } catch {
    return false;
  }
}

function graphqlRequest(
  kind: string,
  body: unknown,
  headers: Record<string, string> = {},
  validate = (status: number, text: string) => status === 200 && hasDataOnly(text),
): autocannon.Request {
  return {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    onResponse: (status, text) => record(kind, status, validate(status, text), text),
  };
}

/** Runs one autocannon instance to its end. */
function cannon(url: string, connections: number, seconds: number, requests: autocannon.Request[]): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration: seconds, requests, timeout: 10 }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function invalidate(endpoint: string): Promise<number> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { authorization: SHARED_KEY, 'content-type': 'application/json' },
    body: JSON.stringify([{ kind: 'subgraph', subgraph: 'products' }]),
  });
  await response.text();
  return response.status;
}

/** One request on its own connection; the whole body, or what cut it. */
function postAlone(port: number, body: string): Promise<{ status: number; text: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/graphql', method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve(res.complete ? { status: res.statusCode ?? 0, text } : { error: 'cut mid-body' }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end(body);
  });
}

/** Names clients see now for every product, through /graphql and Connect; the stale ones listed. */
async function staleAnswers(graph: LoadGraph, base: string, connectBase: string): Promise<string[]> {
  const stale: string[] = [];
  for (const upc of UPCS) {
    const expected = graph.nameOf(upc);
    const viaGraphql = (await (
      await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: CACHED_QUERY, variables: { upc } }) })
    ).json()) as {
      data?: { product?: { name?: string } };
    };
    if (viaGraphql.data?.product?.name !== expected) stale.push(`/graphql ${upc}: ${JSON.stringify(viaGraphql)} (expected ${expected})`);
    const viaConnect = (await (
      await fetch(`${connectBase}${CONNECT_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
        body: JSON.stringify({ upc }),
      })
    ).json()) as {
      product?: { name?: string };
    };
    if (viaConnect.product?.name !== expected) stale.push(`Connect ${upc}: ${JSON.stringify(viaConnect)} (expected ${expected})`);
  }
  return stale;
}

const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

async function main(): Promise<number> {
  const args = readLoadArgs(process.argv.slice(2));
  if ('help' in args) {
    console.log(USAGE);
    return 0;
  }
  if ('error' in args) {
    console.error(args.error);
    return 2;
  }
  const { seconds, connections, replicas } = args;
  // Several replicas: the broadcast and staleness run (valid traffic only; the single-process run covers the rest).
  if (replicas > 1) return runReplicas({ seconds, connections, replicas });
  const connectConnections = Math.max(1, Math.round(connections / 8));
  const invalidConnections = Math.max(1, Math.round(connections / 16));
  const graphqlConnections = connections - connectConnections - invalidConnections;
  // The hostile mix, beside the valid traffic: as many connections again, half HTTP requests, half raw sockets.
  const hostile = args.hostile;
  const hostileHttpConnections = hostile ? Math.max(1, Math.round(connections / 2)) : 0;
  const hostileSocketConnections = hostile ? connections - hostileHttpConnections : 0;

  const dir = await mkdtemp(join(tmpdir(), 'switchyard-load-'));
  const redis = await startRedis();
  const graph = await startLoadGraph();
  let router: RouterProcess | undefined;
  try {
    const ports = { router: await freePort(), invalidation: await freePort(), connect: await freePort() };
    const files = await writeRouterFiles(dir, graph, ports, redis.url, SHARED_KEY);
    router = startRouterProcess(dir, files.configPath);
    const base = `http://127.0.0.1:${ports.router}`;
    const connectBase = `http://127.0.0.1:${ports.connect}`;
    const invalidationEndpoint = `http://127.0.0.1:${ports.invalidation}/invalidation`;
    await waitReady(base, router);
    console.log(`router pid ${router.pid} on ${base}; Connect on ${connectBase}; Redis ${redis.url}`);
    console.log(
      `load: ${seconds}s, ${connections} connections (${graphqlConnections} GraphQL, ${connectConnections} Connect, ${invalidConnections} invalid), invalidations every 250ms`,
    );
    console.log(
      hostile
        ? `hostile mix: ${hostileHttpConnections} HTTP connections (deep documents, fragment bombs, malformed JSON, CSRF form posts, oversized bodies, ...) and ${hostileSocketConnections} sockets (resets, garbage, slowloris)`
        : 'hostile mix: off (--no-hostile)',
    );

    const rss: Array<{ at: number; bytes: number }> = [];
    const started = Date.now();
    // Any exit before the SIGTERM below is a crash.
    let crashedAt: number | undefined;
    let terminating = false;
    void router.exited.then(() => {
      if (!terminating) crashedAt = Date.now() - started;
    });
    const sampler = setInterval(() => {
      const bytes = router?.rss();
      if (bytes !== undefined) rss.push({ at: Date.now() - started, bytes });
    }, 1000);
    let invalidations = 0;
    let invalidationFailures = 0;
    let invalidating = true;
    const invalidator = (async () => {
      while (invalidating) {
        graph.bump();
        const status = await invalidate(invalidationEndpoint).catch(() => 0);
        if (status === 202) invalidations++;
        else invalidationFailures++;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();

    const valid = [
      ...UPCS.map((upc) => graphqlRequest('cached', { query: CACHED_QUERY, variables: { upc } })),
      graphqlRequest('uncached', { query: UNCACHED_QUERY }),
      graphqlRequest('persisted', { extensions: { persistedQuery: { version: 1, sha256Hash: PERSISTED_HASH } } }, { 'graphql-client-name': 'load' }),
    ];
    // With the GraphQL-over-HTTP media type, a request that cannot run is a 4xx (application/json keeps 200 for validation errors).
    const strict = { accept: 'application/graphql-response+json' };
    const clientError = (status: number) => status >= 400 && status < 500;
    const invalid = [
      graphqlRequest('invalid', { query: '{ nope }' }, strict, clientError),
      graphqlRequest('invalid', { query: '{ product(upc: ' }, strict, clientError),
      graphqlRequest('invalid', 'not json', strict, clientError),
      graphqlRequest('invalid', { query: CACHED_QUERY, variables: { upc: { id: 'p1' } } }, strict, clientError),
    ];
    const connect = UPCS.map(
      (upc): autocannon.Request => ({
        method: 'POST',
        path: CONNECT_PATH,
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
        body: JSON.stringify({ upc }),
        onResponse: (status, text) => record('connect', status, status === 200 && text.includes(`"upc":"${upc}"`), text),
      }),
    );
    const sockets = hostile ? startSocketAttacks({ router: ports.router, connect: ports.connect }, hostileSocketConnections) : undefined;
    const [results, hostileResult] = await Promise.all([
      Promise.all([
        cannon(base, graphqlConnections, seconds, valid),
        cannon(connectBase, connectConnections, seconds, connect),
        cannon(base, invalidConnections, seconds, invalid),
      ]),
      hostile ? cannon(base, hostileHttpConnections, seconds, hostileRequests(record)) : undefined,
    ]);
    const socketStats: SocketAttackStats | undefined = await sockets?.stop();
    invalidating = false;
    await invalidator;
    clearInterval(sampler);
    if (crashedAt !== undefined) {
      console.log(`\nFAIL: the router crashed ${(crashedAt / 1000).toFixed(1)}s into the run; its last output:\n${router.output().slice(-4_000)}`);
      return 1;
    }

    // The final invalidation: after it settles no client may see an older name.
    graph.bump();
    const finalInvalidation = await invalidate(invalidationEndpoint);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stale = await staleAnswers(graph, base, connectBase);

    // SIGTERM with requests in flight: each must finish whole, then the router exits 0 and lets Redis go.
    const inFlight = Array.from({ length: IN_FLIGHT_AT_SHUTDOWN }, () => postAlone(ports.router, JSON.stringify({ query: SLOW_QUERY })));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const termAt = Date.now();
    terminating = true;
    router.kill('SIGTERM');
    const answers = await Promise.all(inFlight);
    const exitCode = await Promise.race([router.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20s'), 20_000))]);
    const shutdownMs = Date.now() - termAt;
    const cutShort = answers.filter((answer) => !('status' in answer) || answer.status !== 200 || answer.text !== '{"data":{"slow":"done"}}');
    const redisClients = (await redis.cli('CLIENT', 'LIST')).split('\n').filter(Boolean).length - 1;

    // Report.
    const valid5xx = ['cached', 'uncached', 'persisted', 'connect'].reduce(
      (sum, kind) => sum + Object.entries(stats.get(kind)?.statuses ?? {}).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0),
      0,
    );
    const wrong = [...stats].filter(([kind]) => !kind.startsWith('hostile')).reduce((sum, [, entry]) => sum + entry.wrongBodies, 0);
    const hostileEntries = [...stats].filter(([kind]) => kind.startsWith('hostile'));
    const hostile5xx =
      hostileEntries.reduce((sum, [, entry]) => sum + Object.entries(entry.statuses).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0), 0) +
      (socketStats?.garbage5xx ?? 0);
    const hostileNot4xx = hostileEntries.reduce((sum, [, entry]) => sum + entry.wrongBodies, 0);
    const transportErrors = results.reduce((sum, result) => sum + result.errors + result.timeouts, 0);
    // Memory is judged only on runs long enough to have a steady state after warm-up: 15s, or half a
    // shorter run (the hostile mix's 1 MB bodies take the heap longer to reach its steady size).
    const warmupEnd = Math.min(15_000, (seconds * 1000) / 2);
    const judgeMemory = seconds >= 30;
    const afterWarmup = rss.filter((sample) => sample.at >= warmupEnd);
    const rssAtWarmup = afterWarmup[0]?.bytes;
    const rssAtEnd = afterWarmup.at(-1)?.bytes;
    const rssMax = Math.max(...rss.map((sample) => sample.bytes));
    const growth = rssAtWarmup !== undefined && rssAtEnd !== undefined ? rssAtEnd - rssAtWarmup : undefined;
    const routerOutput = router.output();
    const unhandledInRouter = (routerOutput.match(/unhandled/gi) ?? []).length;
    const routerErrors = routerOutput.split('\n').filter((line) => /"level":"(error|fatal)"/.test(line));
    const requestsPerSecond = results.reduce((sum, result) => sum + result.requests.average, 0);

    const lines = [
      `## Load test: ${seconds}s, ${connections} connections`,
      '',
      '| kind | requests | statuses | wrong answers |',
      '|---|---|---|---|',
      ...[...stats].map(
        ([kind, entry]) =>
          `| ${kind} | ${entry.total} | ${Object.entries(entry.statuses)
            .map(([s, n]) => `${s}: ${n}`)
            .join(', ')} | ${entry.wrongBodies}${entry.example ? ` (e.g. ${entry.example.replace(/\|/g, '\\|')})` : ''} |`,
      ),
      '',
      `- throughput: ${requestsPerSecond.toFixed(0)} requests/s on average; p99 latency GraphQL ${results[0].latency.p99} ms, Connect ${results[1].latency.p99} ms`,
      `- invalidations: ${invalidations} accepted, ${invalidationFailures} failed; final one ${finalInvalidation}`,
      `- 5xx for valid requests: ${valid5xx}`,
      `- transport errors and timeouts: ${transportErrors}`,
      hostile
        ? `- hostile mix: ${hostileEntries.reduce((sum, [, entry]) => sum + entry.total, 0)} HTTP requests (${hostile5xx} answered 5xx, ${hostileNot4xx} not refused as expected, ${(hostileResult?.errors ?? 0) + (hostileResult?.timeouts ?? 0)} connections closed or timed out by the router); sockets: ${socketStats?.resets ?? 0} reset, ${socketStats?.garbage ?? 0} garbage, ${socketStats?.slowOpened ?? 0} slowloris opened (${socketStats?.slowClosedByRouter ?? 0} closed by the router), ${socketStats?.connectFailures ?? 0} could not connect`
        : '- hostile mix: off',
      `- router process: ${crashedAt === undefined ? 'alive until SIGTERM' : `EXITED after ${(crashedAt / 1000).toFixed(1)}s (crash)`}`,
      `- unhandled rejections: router ${unhandledInRouter}, load process ${unhandledInLoadProcess}; router error log lines: ${routerErrors.length}`,
      `- RSS: ${mb(rssAtWarmup)} after warm-up (${(warmupEnd / 1000).toFixed(0)}s), ${mb(rssAtEnd)} at the end, ${mb(rssMax)} at most; growth ${mb(growth)}${judgeMemory ? '' : ' (not judged: run for 30s or more)'}`,
      `- stale answers after the final invalidation: ${stale.length}${stale.length ? ` (${stale.join('; ')})` : ''}`,
      `- SIGTERM with ${IN_FLIGHT_AT_SHUTDOWN} requests in flight: ${IN_FLIGHT_AT_SHUTDOWN - cutShort.length} completed whole, ${cutShort.length} cut; exit ${exitCode} after ${shutdownMs} ms; Redis connections left ${redisClients}`,
    ];
    console.log(`\n${lines.join('\n')}\n`);
    for (const line of routerErrors.slice(0, 5)) console.log(`router error: ${line}`);

    const failures = [
      crashedAt !== undefined && 'the router crashed',
      valid5xx > 0 && '5xx for valid requests',
      hostile5xx > 0 && '5xx for hostile requests',
      hostileNot4xx > 0 && 'hostile requests not refused with a 4xx',
      wrong > 0 && 'wrong answers',
      transportErrors > 0 && 'transport errors',
      unhandledInRouter + unhandledInLoadProcess > 0 && 'unhandled rejections',
      stale.length > 0 && 'stale cache entries',
      finalInvalidation !== 202 && 'final invalidation refused',
      cutShort.length > 0 && 'requests cut by SIGTERM',
      exitCode !== 0 && 'router did not exit 0 on SIGTERM',
      redisClients !== 0 && 'Redis connections left open',
      judgeMemory && growth !== undefined && rssAtWarmup !== undefined && growth > Math.max(64 * 1024 * 1024, rssAtWarmup * 0.25) && 'RSS grew after warm-up',
    ].filter((failure): failure is string => typeof failure === 'string');
    console.log(failures.length === 0 ? 'PASS' : `FAIL: ${failures.join(', ')}`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    router?.kill('SIGKILL');
    await graph.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
