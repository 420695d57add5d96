/**
 * `npm run bench`: the router benchmark (every contender of a scenario in
 * alternating rounds), then the planner benchmark. See bench/README.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from './harness/build.js';
import { killAll } from './harness/processes.js';
import { parseBenchOptions, UsageError, USAGE, type BenchOptions } from './options.js';
import { renderPlannerReport, runPlannerBenchmark } from './planner/planner-bench.js';
import { runRouterBench } from './router-bench.js';
import { scenarios } from './scenarios/index.js';

function listScenarios(): string {
  return scenarios.map((s) => [`${s.name}: ${s.description}`, ...s.contenders.map((c) => `  ${c.id.padEnd(24)} ${c.label} (sharing ${c.sharing})`)].join('\n')).join('\n\n');
}

async function runPlanner(options: BenchOptions): Promise<void> {
  const report = await runPlannerBenchmark(options.quick);
  const markdown = renderPlannerReport(report);
  console.log(`\n${markdown}`);
  const outDir = resolve(REPO_ROOT, options.outDir);
  mkdirSync(outDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  writeFileSync(join(outDir, `${stamp}-planner.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, 'latest-planner.md'), markdown);
}

/** `--scenario subscriptions` (or BENCH_SCENARIO): not a request/response load, it runs on its own (bench/scenarios/subscriptions.ts). */
function wantsSubscriptionBench(argv: readonly string[]): boolean {
  const at = argv.indexOf('--scenario');
  return (at >= 0 && argv[at + 1] === 'subscriptions') || argv.includes('--scenario=subscriptions') || (at < 0 && process.env.BENCH_SCENARIO === 'subscriptions');
}

async function main(): Promise<void> {
  if (wantsSubscriptionBench(process.argv.slice(2))) {
    const { runSubscriptionBench } = await import('./scenarios/subscriptions.js');
    await runSubscriptionBench(process.argv.slice(2));
    process.exit(0);
  }
  let options: BenchOptions;
  try {
    options = parseBenchOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) return console.log(USAGE);
  if (options.list) return console.log(listScenarios());
  const stop = () => {
    killAll();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    if (!options.plannerOnly) await runRouterBench(options);
    if (options.planner || options.plannerOnly) await runPlanner(options);
  } catch (error) {
    killAll();
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    throw error;
  }
}

await main();
