/**
 * One run of one contender: start it (pinned), wait until it answers, check
 * the answer, count the subgraph fetches of one request alone, warm up,
 * load it while reading its CPU time, RSS and the subgraph counters, check
 * the answer again, stop it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareAnswer, sendOnce } from './check.js';
import { LoadRun, quantile, type LoadCounters } from './load.js';
import { cpuMs, processTree, rssBytes, RssSampler } from './proc-stats.js';
import { freePort, startProcess, type Pinning, type Started } from './processes.js';
import type { BuiltPrograms } from './build.js';
import type { BenchRequest, Contender, Launch } from './scenario.js';
import { totalRequests, type RunningSubgraphs } from './subgraphs.js';

/** What every run of a benchmark shares. */
export interface RunEnvironment {
  readonly workDir: string;
  readonly programs: BuiltPrograms;
  readonly pinning: Pinning;
  readonly subgraphs: RunningSubgraphs;
  /** URLs of the scenario's services, by name. */
  readonly services: Readonly<Record<string, string>>;
  readonly supergraphFile: string;
  readonly expectedFile: string;
  /** The expected response, parsed. */
  readonly expected: unknown;
  /** The expected response bytes. */
  readonly expectedText: string;
  readonly connections: number;
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
  /** Seconds to wait for a contender to answer after its start. */
  readonly startTimeoutSeconds: number;
  /** Only check answers and count fetches; no load. */
  readonly checkOnly: boolean;
}

/** Measurements of one run; the numbers are absent when `problem` is set. */
export interface RunResult {
  readonly contender: string;
  readonly round: number;
  /** Why the run produced no numbers (wrong answer, did not start). */
  readonly problem?: string;
  /** Start until the first answer, ms. */
  readonly startupMs?: number;
  /** The first (cold: plan cache empty) request, ms. */
  readonly firstResponseMs?: number;
  /** True when the body is byte-identical to the expected one (not only deep-equal). */
  readonly exactBytes?: boolean;
  /** Subgraph requests of one client request alone: the plan's fetch count. */
  readonly fetchesAlone?: number;
  /** Subgraph requests of one client request alone, per subgraph. */
  readonly fetchesAloneBySubgraph?: Readonly<Record<string, number>>;
  readonly rps?: number;
  readonly latencyP50Ms?: number;
  readonly latencyP99Ms?: number;
  readonly latencyMeanMs?: number;
  /** Responses received in the measured window. */
  readonly requests?: number;
  /** Connection errors + timeouts + non-2xx responses. */
  readonly errors?: number;
  readonly cpuMsPerRequest?: number;
  readonly rssIdleMB?: number;
  readonly rssPeakMB?: number;
  readonly rssEndMB?: number;
  /** Subgraph requests per response in the measured window (steady load). */
  readonly subgraphRequestsPerRequest?: number;
  /** Mean bytes per response, headers included. */
  readonly responseBytes?: number;
  /** CPU of the load side (load generator + subgraphs) as a share of one core. */
  readonly loadSideBusy?: number;
}

const MB = 1024 * 1024;

function cleanEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'production', ...extra };
}

/**
 * The readiness probe: a trivial operation, so the benchmark operation's
 * first request still finds every cache empty.
 */
const PROBE: BenchRequest = {
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: JSON.stringify({ query: '{ __typename }' }),
};

async function waitUntilAnswering(started: Started, baseUrl: string, probe: BenchRequest, timeoutSeconds: number): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let exited: number | string | undefined;
  void started.exited.then((code) => (exited = code));
  let last = 'no answer';
  for (;;) {
    if (exited !== undefined) throw new Error(`exited (${exited}) before answering:\n${started.tail()}`);
    try {
      const answer = await sendOnce(baseUrl, probe, 60_000);
      if (answer.status === 200) return;
      last = `HTTP ${answer.status}: ${answer.text.slice(0, 200)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`not ready within ${timeoutSeconds}s (${last}):\n${started.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A contender started and answering, kept for one or several load phases. */
export interface StartedContender {
  readonly contender: Contender;
  readonly started: Started;
  readonly baseUrl: string;
  /** Start until the first answer, ms. */
  readonly startupMs: number;
  /** The run environment with this contender's expected answer. */
  readonly env: RunEnvironment;
}

/** Starts `contender` and waits until it answers; a failure to start is returned as `problem`, never thrown. */
export async function startContender(env: RunEnvironment, contender: Contender, round: number): Promise<StartedContender | { readonly problem: string }> {
  const dir = join(env.workDir, 'contenders', contender.id);
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  let launch: Launch;
  try {
    launch = await contender.launch({
      port,
      supergraphFile: env.supergraphFile,
      subgraphUrls: env.subgraphs.urls,
      expectedFile: env.expectedFile,
      dir,
      programs: env.programs,
      services: env.services,
      freePort,
    });
  } catch (error) {
    return { problem: `could not prepare its start: ${(error as Error).message}` };
  }
  const began = performance.now();
  const started = startProcess({
    command: launch.command,
    args: launch.args,
    env: cleanEnv(launch.env),
    cwd: dir,
    cores: !env.pinning.enabled ? undefined : contender.pin === 'none' ? env.pinning.allCores : env.pinning.contenderCores,
    logFile: join(dir, `round-${round}.log`),
  });
  try {
    await waitUntilAnswering(started, baseUrl, contender.probe ?? PROBE, env.startTimeoutSeconds);
  } catch (error) {
    await started.stop();
    return { problem: `did not start: ${(error as Error).message}` };
  }
  const startupMs = performance.now() - began;
  const expected = contender.expect ? contender.expect(env.expected) : env.expected;
  const expectedText = contender.expect ? JSON.stringify(expected) : env.expectedText;
  return { contender, started, baseUrl: launch.url ?? baseUrl, startupMs, env: { ...env, expected, expectedText } };
}

/**
 * One load phase of a started contender (check, fetches alone, warm-up,
 * measured window, check again); never throws for the contender's failure.
 * `seconds` overrides the warm-up and measured seconds (an unmeasured settling load).
 */
export async function measurePhase(
  running: StartedContender,
  request: BenchRequest,
  round: number,
  seconds?: { readonly warmup: number; readonly duration: number },
): Promise<RunResult> {
  const env = seconds ? { ...running.env, warmupSeconds: seconds.warmup, durationSeconds: seconds.duration } : running.env;
  try {
    return await measureStarted(env, running.contender, request, round, running.started, running.baseUrl, running.startupMs);
  } catch (error) {
    return { contender: running.contender.id, round, problem: `${(error as Error).message}\n${running.started.tail()}` };
  }
}

/** Runs `contender` once: start, one load phase, stop. Never throws for a contender's failure (it becomes `problem`). */
export async function measureContender(env: RunEnvironment, contender: Contender, request: BenchRequest, round: number): Promise<RunResult> {
  const running = await startContender(env, contender, round);
  if ('problem' in running) return { contender: contender.id, round, problem: running.problem };
  try {
    return await measurePhase(running, request, round);
  } finally {
    await running.started.stop();
  }
}

async function measureStarted(
  env: RunEnvironment,
  contender: Contender,
  request: BenchRequest,
  round: number,
  started: Started,
  baseUrl: string,
  startupMs: number,
): Promise<RunResult> {
  const failed = (problem: string): RunResult => ({ contender: contender.id, round, problem });
  await env.subgraphs.reset();
  const first = await sendOnce(baseUrl, request);
  // Kept for a look when the answer is wrong or not byte-identical.
  writeFileSync(join(env.workDir, 'contenders', contender.id, `round-${round}.response.json`), first.text);
  const wrong = compareAnswer(first, env.expected);
  if (wrong) return failed(`wrong answer: ${wrong}`);
  const logProblem = contender.checkLog?.(started.tail(200));
  if (logProblem) return failed(logProblem);
  await env.subgraphs.reset();
  await sendOnce(baseUrl, request);
  const alone = await env.subgraphs.counts();
  const rssIdle = rssBytes([started.pid]);
  const checked = {
    contender: contender.id,
    round,
    startupMs,
    firstResponseMs: first.ms,
    exactBytes: first.text === env.expectedText,
    fetchesAlone: totalRequests(alone),
    fetchesAloneBySubgraph: alone,
    rssIdleMB: rssIdle / MB,
  } satisfies RunResult;
  if (env.checkOnly) return checked;

  const tree = processTree(started.pid);
  const load = new LoadRun({ baseUrl, request, connections: env.connections });
  let window: { from: Snapshot; to: Snapshot; rss: { peak: number; end: number } };
  try {
    await sleep(env.warmupSeconds * 1000);
    const from = await snapshot(env, tree, load);
    load.record(true);
    const rss = new RssSampler(tree);
    await sleep(env.durationSeconds * 1000);
    const to = await snapshot(env, tree, load);
    load.record(false);
    window = { from, to, rss: rss.stop() };
  } finally {
    await load.stop();
  }
  const after = await sendOnce(baseUrl, request);
  const wrongAfter = compareAnswer(after, env.expected);
  if (wrongAfter) return failed(`wrong answer after the load: ${wrongAfter}`);
  const { from, to, rss } = window;
  const responses = to.load.responses - from.load.responses;
  const wallMs = to.at - from.at;
  const perResponse = (value: number) => (responses > 0 ? value / responses : undefined);
  return {
    ...checked,
    rps: (responses * 1000) / wallMs,
    latencyP50Ms: quantile(load.latencies, 0.5),
    latencyP99Ms: quantile(load.latencies, 0.99),
    latencyMeanMs: load.latencies.length > 0 ? load.latencies.reduce((a, b) => a + b, 0) / load.latencies.length : undefined,
    requests: responses,
    errors: to.load.errors - from.load.errors,
    cpuMsPerRequest: perResponse(to.contenderCpuMs - from.contenderCpuMs),
    rssPeakMB: rss.peak / MB,
    rssEndMB: rss.end / MB,
    subgraphRequestsPerRequest: perResponse(totalRequests(to.subgraphCounts) - totalRequests(from.subgraphCounts)),
    responseBytes: perResponse(to.load.bytes - from.load.bytes),
    loadSideBusy: (to.loadSideCpuMs - from.loadSideCpuMs) / wallMs,
  };
}

/** The state of everything measured, at one moment of a load. */
interface Snapshot {
  readonly at: number;
  readonly contenderCpuMs: number;
  readonly loadSideCpuMs: number;
  readonly load: LoadCounters;
  readonly subgraphCounts: Readonly<Record<string, number>>;
}

async function snapshot(env: RunEnvironment, tree: readonly number[], load: LoadRun): Promise<Snapshot> {
  const at = performance.now();
  const contenderCpuMs = cpuMs(tree);
  const loadSideCpuMs = cpuMs([env.subgraphs.process.pid]) + cpuOfThisProcess();
  const counters = load.counters();
  return { at, contenderCpuMs, loadSideCpuMs, load: counters, subgraphCounts: await env.subgraphs.counts() };
}

function cpuOfThisProcess(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}
