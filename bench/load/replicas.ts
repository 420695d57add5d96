/**
 * `npm run load -- --replicas N`: N router processes with the memory
 * provider share invalidations through one redis-server
 * (`response_cache.invalidation.broadcast`), as replicas behind a load
 * balancer do. Load goes to every replica, invalidations to each in turn,
 * and probes check the documented staleness bound (docs/deployment.md): a
 * request sent more than STALENESS_BOUND_MS after an invalidation was sent,
 * to any replica, never gets data from before it. Halfway through, Redis is
 * killed for OUTAGE_MS and started again: no replica may crash, and an
 * invalidation sent meanwhile may be missed by the others only until they
 * are subscribed again (Redis back, plus up to RECONNECT_BACKOFF_MS).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startRedis } from '../../test/support/redis.js';
import { CACHED_QUERY, startLoadGraph, UPCS, writeRouterFiles } from './graph.js';
import { startRouterProcess, waitReady, type RouterProcess } from './router-process.js';

/** The bound docs/deployment.md states for a healthy Redis. */
export const STALENESS_BOUND_MS = 1_000;
const SHARED_KEY = 'load-test-shared-key-0123456789abcdef';
const INVALIDATE_EVERY_MS = 250;
/** How long Redis stays down halfway through the run. */
const OUTAGE_MS = 2_000;
/** The broadcast's longest reconnect backoff (LINK_SOCKET in plugins/response-cache/broadcast-link.ts). */
const RECONNECT_BACKOFF_MS = 1_000;

/** One router process and its addresses. */
interface Replica {
  readonly process: RouterProcess;
  readonly base: string;
  readonly invalidation: string;
}

/** What the probes saw. */
interface ProbeStats {
  answers: number;
  failed: number;
  /** Answers older than the bound allows, with how late they were. */
  late: Array<{ replica: number; upc: string; lateByMs: number }>;
  /** The longest a replica served data after the invalidation that replaced it was sent, with Redis up. */
  maxStalenessMs: number;
  /** The same for data replaced while Redis was down. */
  maxStalenessInOutageMs: number;
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

/** The data version a name carries (`Table v3` is 3). */
function versionOf(body: unknown): number | undefined {
  const name = (body as { data?: { product?: { name?: unknown } } } | undefined)?.data?.product?.name;
  const match = typeof name === 'string' ? / v(\d+)$/.exec(name) : null;
  return match ? Number(match[1]) : undefined;
}

/** Runs the multi-replica load; resolves with the exit code (0 when every check passed). */
export async function runReplicas({ seconds, connections, replicas: count }: { seconds: number; connections: number; replicas: number }): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-load-replicas-'));
  const redis = await startRedis();
  const graph = await startLoadGraph();
  const replicas: Replica[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const replicaDir = join(dir, `replica-${i}`);
      await mkdir(replicaDir);
      const ports = { router: await freePort(), invalidation: await freePort(), connect: await freePort() };
      const files = await writeRouterFiles(replicaDir, graph, ports, redis.url, SHARED_KEY, 'memory-broadcast');
      replicas.push({
        process: startRouterProcess(replicaDir, files.configPath),
        base: `http://127.0.0.1:${ports.router}`,
        invalidation: `http://127.0.0.1:${ports.invalidation}/invalidation`,
      });
    }
    await Promise.all(replicas.map((replica) => waitReady(replica.base, replica.process)));
    // Each subscribes in the background: start once Redis lists them all.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (await redis.cli('PUBSUB', 'NUMSUB', 'router_response_cache:invalidations')).split('\n')[1] !== String(count)) await sleep(50);
    console.log(`${count} router replicas (memory cache, invalidation broadcast) on ${replicas.map((replica) => replica.base).join(', ')}; one Redis ${redis.url}`);
    console.log(
      `load: ${seconds}s, ${connections} connections spread over the replicas; an invalidation every ${INVALIDATE_EVERY_MS}ms, to each replica in turn; staleness bound ${STALENESS_BOUND_MS}ms`,
    );

    const started = Date.now();
    let crashed: string | undefined;
    let terminating = false;
    replicas.forEach((replica, i) => void replica.process.exited.then((code) => (crashed ??= terminating ? undefined : `replica ${i} exited (${code})`)));

    // When each data version stopped being current: the moment its successor's invalidation was sent.
    const replacedAt = new Map<number, number>();
    let running = true;
    let invalidations = 0;
    let refused = 0;
    // While Redis is down an invalidation still answers 202 (applied locally); only other statuses count as refused.
    const invalidator = (async () => {
      for (let n = 0; running; n++) {
        const previous = graph.version;
        graph.bump();
        replacedAt.set(previous, Date.now());
        const status = await invalidate(replicas[n % count]!.invalidation).catch(() => 0);
        if (status === 202) invalidations++;
        else refused++;
        await sleep(INVALIDATE_EVERY_MS);
      }
    })();

    // Halfway through: Redis down for OUTAGE_MS.
    const outage = { from: Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY };
    const outageDone = (async () => {
      await sleep((seconds * 1000) / 2);
      outage.from = Date.now();
      await redis.kill();
      await sleep(OUTAGE_MS);
      await redis.restart();
      outage.to = Date.now();
    })();
    /** How stale an answer may be, for data replaced at `replaced`: longer when the invalidation could not be broadcast. */
    const allowedMs = (replaced: number) =>
      replaced >= outage.from - STALENESS_BOUND_MS && replaced <= outage.to ? outage.to - replaced + RECONNECT_BACKOFF_MS + STALENESS_BOUND_MS : STALENESS_BOUND_MS;
    const probes: ProbeStats = { answers: 0, failed: 0, late: [], maxStalenessMs: 0, maxStalenessInOutageMs: 0 };
    const probing = replicas.map(async (replica, i) => {
      for (let n = 0; running; n++) {
        const upc = UPCS[n % UPCS.length]!;
        const sentAt = Date.now();
        const body = await query(replica.base, upc).catch(() => undefined);
        const version = versionOf(body);
        if (version === undefined) {
          probes.failed++;
          await sleep(100);
          continue;
        }
        probes.answers++;
        const replaced = replacedAt.get(version);
        if (replaced === undefined || replaced > sentAt) continue;
        const staleness = sentAt - replaced;
        const allowed = allowedMs(replaced);
        if (allowed === STALENESS_BOUND_MS) probes.maxStalenessMs = Math.max(probes.maxStalenessMs, staleness);
        else probes.maxStalenessInOutageMs = Math.max(probes.maxStalenessInOutageMs, staleness);
        if (staleness > allowed) probes.late.push({ replica: i, upc, lateByMs: staleness - allowed });
        await sleep(10);
      }
    });

    const perReplica = Math.max(1, Math.floor(connections / count));
    let bad = 0;
    const results = await Promise.all(
      replicas.map(
        (replica) =>
          new Promise<autocannon.Result>((resolve, reject) => {
            const requests = UPCS.map(
              (upc): autocannon.Request => ({
                method: 'POST',
                path: '/graphql',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ query: CACHED_QUERY, variables: { upc } }),
                onResponse: (status, text) => {
                  if (status !== 200 || !text.includes(`"upc":"${upc}"`)) bad++;
                },
              }),
            );
            autocannon({ url: replica.base, connections: perReplica, duration: seconds, requests, timeout: 10 }, (error, result) => (error ? reject(error) : resolve(result)));
          }),
      ),
    );
    running = false;
    await Promise.all([invalidator, ...probing, outageDone]);

    // The last invalidation, to one replica: every replica must answer the new data within the bound.
    graph.bump();
    const finalSentAt = Date.now();
    const finalStatus = await invalidate(replicas[0]!.invalidation);
    const settled = await Promise.all(
      replicas.map(async (replica) => {
        for (;;) {
          const ok = await Promise.all(UPCS.map(async (upc) => versionOf(await query(replica.base, upc).catch(() => undefined)) === graph.version));
          if (ok.every(Boolean)) return Date.now() - finalSentAt;
          if (Date.now() - finalSentAt > 5 * STALENESS_BOUND_MS) return Number.POSITIVE_INFINITY;
          await sleep(20);
        }
      }),
    );

    terminating = true;
    for (const replica of replicas) replica.process.kill('SIGTERM');
    const exits = await Promise.all(replicas.map((replica) => Promise.race([replica.process.exited, sleep(20_000).then(() => 'still running after 20s')])));

    const transportErrors = results.reduce((sum, result) => sum + result.errors + result.timeouts + result.non2xx, 0);
    const total = results.reduce((sum, result) => sum + result.requests.average, 0);
    const lines = [
      `## Load test: ${count} replicas, ${seconds}s, ${connections} connections`,
      '',
      `- throughput: ${total.toFixed(0)} requests/s over all replicas (${results.map((result) => result.requests.average.toFixed(0)).join(' / ')}); p99 latency ${results.map((result) => `${result.latency.p99} ms`).join(' / ')}`,
      `- wrong answers or transport errors: ${bad} wrong, ${transportErrors} errors, timeouts or non-2xx`,
      `- invalidations: ${invalidations} accepted, ${refused} refused or failed`,
      `- Redis killed ${((outage.from - started) / 1000).toFixed(1)}s into the run and back ${outage.to - outage.from} ms later`,
      `- staleness probes: ${probes.answers} answers (${probes.failed} failed); longest a replaced version was served: ${probes.maxStalenessMs} ms with Redis up (bound ${STALENESS_BOUND_MS} ms), ${probes.maxStalenessInOutageMs} ms for data replaced during the outage (bound: until Redis is back + ${RECONNECT_BACKOFF_MS + STALENESS_BOUND_MS} ms); beyond the bound: ${probes.late.length}${probes.late.length ? ` (e.g. ${JSON.stringify(probes.late.slice(0, 3))})` : ''}`,
      `- final invalidation (${finalStatus}) seen by every replica after ${settled.map((ms) => (Number.isFinite(ms) ? `${ms} ms` : 'never')).join(' / ')}`,
      `- replicas: ${crashed ?? 'all alive until SIGTERM'}; exit codes ${exits.join(', ')}`,
    ];
    console.log(`\n${lines.join('\n')}\n`);
    for (const [i, replica] of replicas.entries()) {
      const errors = replica.process
        .output()
        .split('\n')
        .filter((line) => /"level":"(error|fatal)"/.test(line));
      for (const line of errors.slice(0, 3)) console.log(`replica ${i} error: ${line}`);
    }
    const failures = [
      crashed !== undefined && 'a replica crashed',
      bad > 0 && 'wrong answers',
      transportErrors > 0 && 'transport errors',
      probes.failed > 0 && 'failed probes',
      probes.late.length > 0 && `answers staler than ${STALENESS_BOUND_MS} ms`,
      refused > 0 && 'invalidations refused',
      finalStatus !== 202 && 'final invalidation refused',
      settled.some((ms) => ms > STALENESS_BOUND_MS) && 'final invalidation not seen everywhere within the bound',
      exits.some((code) => code !== 0) && 'a replica did not exit 0 on SIGTERM',
    ].filter((failure): failure is string => typeof failure === 'string');
    console.log(failures.length === 0 ? 'PASS' : `FAIL: ${failures.join(', ')}`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    for (const replica of replicas) replica.process.kill('SIGKILL');
    await graph.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
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

async function query(base: string, upc: string): Promise<unknown> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: CACHED_QUERY, variables: { upc } }),
  });
  return response.json();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
