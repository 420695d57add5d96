/**
 * The router benchmark: builds the programs, starts the subgraphs, composes
 * the supergraph, computes the expected answer, then runs every contender
 * of the scenario in alternating rounds and reports medians and spreads.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { composeBenchSupergraph } from './graph/supergraph.js';
import { buildPrograms, REPO_ROOT } from './harness/build.js';
import { measureContender, measurePhase, startContender, type RunEnvironment, type RunResult, type StartedContender } from './harness/measure.js';
import { processTree } from './harness/proc-stats.js';
import { repin, setUpPinning } from './harness/processes.js';
import { renderReport, writeResults, type RunFacts } from './harness/report.js';
import type { Contender, Scenario, TargetCheck } from './harness/scenario.js';
import type { ServerName } from './harness/build.js';
import { startServer, startSubgraphs, type RunningServer } from './harness/subgraphs.js';
import { summarize } from './harness/summary.js';
import { UsageError, type BenchOptions } from './options.js';
import { scenarios } from './scenarios/index.js';

/** Where programs are built and contenders run; `BENCH_WORK_DIR` gives concurrent runs a folder each. */
export const WORK_DIR = process.env.BENCH_WORK_DIR ? resolve(process.env.BENCH_WORK_DIR) : join(REPO_ROOT, 'bench', '.work');

export function findScenario(name: string): Scenario {
  const scenario = scenarios.find((s) => s.name === name);
  if (!scenario) throw new UsageError(`unknown scenario "${name}"; known: ${scenarios.map((s) => s.name).join(', ')}`);
  return scenario;
}

/** The scenario's contenders that `--contenders` and `--sharing` keep, in the scenario's order. */
export function selectContenders(scenario: Scenario, options: BenchOptions): Contender[] {
  const known = new Set(scenario.contenders.map((c) => c.id));
  const unknown = options.contenders?.filter((id) => !known.has(id)) ?? [];
  if (unknown.length > 0) throw new UsageError(`unknown contender(s) ${unknown.join(', ')}; ${scenario.name} has: ${[...known].join(', ')}`);
  const chosen = scenario.contenders.filter(
    (c) => (!options.contenders || options.contenders.includes(c.id)) && (options.sharing === 'both' || c.sharing === 'n/a' || c.sharing === options.sharing),
  );
  if (chosen.length === 0) throw new UsageError('no contender left to run (check --contenders and --sharing)');
  return chosen;
}

function gitCommit(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT }).stdout?.toString().trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'plugins'], { cwd: REPO_ROOT }).stdout?.toString().trim();
  return dirty ? `${head} + uncommitted changes in src/plugins` : head;
}

function progress(result: RunResult, label: string, round: number, rounds: number): string {
  const head = `round ${round + 1}/${rounds} ${label.padEnd(22)}`;
  if (result.problem) return `${head} FAILED: ${result.problem.split('\n')[0]}`;
  if (result.rps === undefined) {
    return `${head} answer OK${result.exactBytes ? ' (byte-identical)' : ''}, ${result.fetchesAlone} subgraph requests, first request ${result.firstResponseMs?.toFixed(1)} ms`;
  }
  return (
    `${head} ${result.rps?.toFixed(0).padStart(6)} req/s  p99 ${result.latencyP99Ms?.toFixed(1)} ms  ` +
    `CPU ${result.cpuMsPerRequest?.toFixed(2)} ms/req  RSS ${result.rssPeakMB?.toFixed(0)} MB  ` +
    `subgraph req/req ${result.fetchesAlone} alone, ${result.subgraphRequestsPerRequest?.toFixed(2)} loaded`
  );
}

/** One fresh run per contender per round: start, load, stop. */
async function runFreshRounds(env: RunEnvironment, scenario: Scenario, contenders: readonly Contender[], rounds: number): Promise<RunResult[]> {
  const results: RunResult[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const contender of rotated(contenders, round)) {
      const reason = contender.unavailable?.();
      const result: RunResult = reason
        ? { contender: contender.id, round, problem: `unavailable: ${reason}` }
        : await measureContender(env, contender, contender.request ?? scenario.request, round);
      results.push(result);
      console.log(progress(result, contender.id, round, rounds));
    }
  }
  return results;
}

/**
 * `Scenario.warmPhases`: every contender started and settled, then one load
 * phase per contender per round; with `starts`, the rounds are split into
 * that many spans and every contender is started afresh (and settled
 * again) for each.
 */
async function runWarmPhases(
  env: RunEnvironment,
  scenario: Scenario,
  contenders: readonly Contender[],
  rounds: number,
  warm: NonNullable<Scenario['warmPhases']>,
): Promise<RunResult[]> {
  const results: RunResult[] = [];
  const starts = startsFor(warm, rounds);
  for (let span = 0; span < starts; span++) {
    // Spans as even as they go: the first rounds % starts spans get one round more.
    const first = Math.floor((span * rounds) / starts);
    const last = Math.floor(((span + 1) * rounds) / starts);
    if (starts > 1) console.log(`rounds ${first + 1}-${last}: contenders started afresh`);
    results.push(...(await warmGeneration(env, scenario, contenders, { first, last, rounds }, warm.settleSeconds)));
  }
  return results;
}

/** How many times each contender is started in a warm-phase run of `rounds` rounds. */
function startsFor(warm: NonNullable<Scenario['warmPhases']>, rounds: number): number {
  return Math.max(1, Math.min(rounds, warm.starts ?? 1));
}

/** Starts and settles every contender, runs rounds `first` to `last` (exclusive) in warm phases, stops them. */
async function warmGeneration(
  env: RunEnvironment,
  scenario: Scenario,
  contenders: readonly Contender[],
  span: { readonly first: number; readonly last: number; readonly rounds: number },
  settleSeconds: number,
): Promise<RunResult[]> {
  const results: RunResult[] = [];
  const running = new Map<string, StartedContender>();
  const request = (contender: Contender) => contender.request ?? scenario.request;
  // The loaded contender gets the contender core; the waiting ones sit with the load side.
  const focus = (id: string) => {
    if (!env.pinning.enabled) return;
    for (const [other, { started }] of running) repin(processTree(started.pid), other === id ? env.pinning.contenderCores : env.pinning.loadCores);
  };
  try {
    for (const contender of contenders) {
      const reason = contender.unavailable?.();
      const started = reason ? { problem: `unavailable: ${reason}` } : await startContender(env, contender, span.first);
      if ('problem' in started) {
        for (let round = span.first; round < span.last; round++) results.push({ contender: contender.id, round, problem: started.problem });
        console.log(`${contender.id}: ${started.problem.split('\n')[0]}`);
        continue;
      }
      running.set(contender.id, started);
    }
    for (const [id, started] of running) {
      focus(id);
      const settled = await measurePhase(started, request(started.contender), span.first, { warmup: settleSeconds, duration: 1 });
      console.log(`settle ${id}: ${settled.problem ? `FAILED: ${settled.problem.split('\n')[0]}` : `${settleSeconds}s of load, ${settled.rps?.toFixed(0)} req/s at the end`}`);
    }
    for (let round = span.first; round < span.last; round++) {
      for (const contender of rotated(contenders, round)) {
        const started = running.get(contender.id);
        if (!started) continue;
        focus(contender.id);
        const result = await measurePhase(started, request(contender), round);
        results.push(result);
        console.log(progress(result, contender.id, round, span.rounds));
      }
    }
  } finally {
    for (const { started } of running.values()) await started.stop();
  }
  return results;
}

/** The contenders in this round's order: rotating spreads a slow stretch of the machine over all of them. */
function rotated<T>(items: readonly T[], round: number): T[] {
  return items.map((_, i) => items[(i + round) % items.length]!);
}

/** Runs the router benchmark and prints its table; returns the path of the JSON result file. */
export async function runRouterBench(options: BenchOptions): Promise<string> {
  const scenario = findScenario(options.scenario);
  const contenders = selectContenders(scenario, options);
  const rounds = !options.roundsGiven && !options.quick && !options.checkOnly && scenario.defaultRounds ? scenario.defaultRounds : options.rounds;
  mkdirSync(WORK_DIR, { recursive: true });
  // Built programs import packages by name: outside the repository they find them through this link.
  const modules = join(WORK_DIR, 'node_modules');
  if (!WORK_DIR.startsWith(REPO_ROOT + sep) && !existsSync(modules)) symlinkSync(join(REPO_ROOT, 'node_modules'), modules, 'dir');
  const startLoad = loadavg()[0]!;
  const pinning = setUpPinning(options.pin);
  console.log(pinning.enabled ? 'pinning: contender on core 0, subgraphs and load generator on core 1' : `pinning off: ${pinning.reason}`);

  const buildStarted = performance.now();
  const programs = await buildPrograms(WORK_DIR, options.switchyardCli);
  console.log(`built the programs in ${((performance.now() - buildStarted) / 1000).toFixed(1)}s (Switchyard CLI: ${programs.switchyardCli})`);

  const delayMs = options.subgraphDelayMs ?? scenario.subgraphs?.delayMs ?? 0;
  const subgraphs = await startSubgraphs({
    program: programs.servers['subgraph-server'],
    workDir: WORK_DIR,
    cores: pinning.enabled ? pinning.loadCores : undefined,
    delayMs,
    cacheControl: scenario.subgraphs?.cacheControl,
    graph: scenario.subgraphs?.graph,
  });
  const services: Partial<Record<ServerName, RunningServer>> = {};
  try {
    for (const service of scenario.services ?? []) {
      services[service.program] = await startServer({
        name: service.program,
        program: programs.servers[service.program],
        workDir: WORK_DIR,
        cores: pinning.enabled ? pinning.loadCores : undefined,
        env: service.env,
      });
    }
    const serviceUrls = Object.assign({}, ...Object.values(services).map((s) => s.urls)) as Record<string, string>;
    const supergraphSdl = scenario.supergraph ? scenario.supergraph(subgraphs.urls) : composeBenchSupergraph(subgraphs.urls);
    const supergraphFile = join(WORK_DIR, 'supergraph.graphql');
    writeFileSync(supergraphFile, supergraphSdl);
    const expectedText = await scenario.expected(supergraphSdl);
    const expectedFile = join(WORK_DIR, 'expected.json');
    writeFileSync(expectedFile, expectedText);
    const env: RunEnvironment = {
      workDir: WORK_DIR,
      programs,
      pinning,
      subgraphs,
      services: serviceUrls,
      supergraphFile,
      expectedFile,
      expected: JSON.parse(expectedText) as unknown,
      expectedText,
      connections: options.connections,
      warmupSeconds: options.warmupSeconds,
      durationSeconds: options.durationSeconds,
      startTimeoutSeconds: options.startTimeoutSeconds,
      checkOnly: options.checkOnly,
    };
    const warm = scenario.warmPhases && !options.checkOnly ? scenario.warmPhases : undefined;
    const results = warm ? await runWarmPhases(env, scenario, contenders, rounds, warm) : await runFreshRounds(env, scenario, contenders, rounds);
    const summaries = summarize(contenders, results);
    const targets: TargetCheck[] = [...(scenario.targets?.(summaries) ?? [])];
    if (scenario.afterRounds) {
      console.log(`${scenario.name}: measurements after the rounds...`);
      targets.push(
        ...(await scenario.afterRounds({
          programs,
          workDir: join(WORK_DIR, scenario.name),
          services,
          checkOnly: options.checkOnly,
          quick: options.quick,
          rounds,
          phaseSeconds: options.warmupSeconds + options.durationSeconds,
          contenders: contenders.map((c) => c.id),
          contenderCores: pinning.enabled ? pinning.contenderCores : undefined,
        })),
      );
    }
    const facts: RunFacts = {
      date: new Date().toISOString(),
      node: process.version,
      cpu: `${cpus()[0]?.model.trim() ?? 'unknown CPU'} x${cpus().length}`,
      commit: gitCommit(),
      pinning:
        (pinning.enabled ? 'contenders pinned to core 0 (unless the scenario says otherwise), load on core 1' : `not pinned (${pinning.reason})`) +
        (warm
          ? `; warm phases: each contender started ${startsFor(warm, rounds) > 1 ? `${startsFor(warm, rounds)} times (the rounds split between the starts)` : 'once'} and loaded ${warm.settleSeconds}s unmeasured after each start, the waiting one on the load core`
          : ''),
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      rounds,
      checkOnly: options.checkOnly,
      subgraphDelayMs: delayMs,
      expectedBytes: Buffer.byteLength(expectedText),
      loadAverage: [startLoad, loadavg()[0]!],
    };
    const ordered = contenders.map((c) => summaries.get(c.id)!);
    const markdown = renderReport(scenario, facts, ordered, targets);
    console.log(`\n${markdown}`);
    const file = writeResults(resolve(REPO_ROOT, options.outDir), scenario, facts, results, ordered, targets, markdown);
    console.log(`results: ${file}`);
    return file;
  } finally {
    for (const service of Object.values(services)) await service.process.stop();
    await subgraphs.process.stop();
  }
}
