/**
 * Pools the rounds of several saved runs of one scenario: the median of
 * the per-round ratios of one contender to others, with a 95% bootstrap
 * interval. One run on a noisy machine can land either side of a line a
 * few percent wide; the rounds of several runs say where the figure lies.
 *
 *   npm run bench:pool -- --a switchyard-profiler --b switchyard,switchyard-twin bench/results/*-profiling.json
 *
 * `--b` with several contenders divides by their mean in each round (the
 * profiling scenario's two unprofiled routers). `--metric` (default `rps`)
 * is any numeric field of a run. Rounds pair within a file only; a round
 * missing any contender is left out.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { medianInterval } from './harness/targets.js';
import { spreadOf } from './harness/summary.js';

interface SavedRun {
  readonly contender: string;
  readonly round: number;
  readonly [metric: string]: unknown;
}

const USAGE = `usage: npm run bench:pool -- --a <contender> --b <contender>[,<contender>...] [--metric rps] <results.json>...

  --a <contender>      the contender whose figure is divided
  --b <contender>,...  the contender(s) it is divided by (several: their mean in each round)
  --metric <field>     the numeric field of a run to compare (default rps)
  -h, --help           print this help`;

/** Stops on a usage error (exit 2): one `error:` line, then the usage. */
function usageError(message: string): never {
  console.error(`error: ${message}\n\n${USAGE}`);
  process.exit(2);
}

/** The command line; parseArgs's own errors (unknown option, option without its value) are usage errors, not stack traces. */
function parseCommandLine() {
  try {
    return parseArgs({
      options: { a: { type: 'string' }, b: { type: 'string' }, metric: { type: 'string', default: 'rps' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    });
  } catch (error) {
    return usageError((error as Error).message);
  }
}

const { values: options, positionals: files } = parseCommandLine();
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!options.a || !options.b || files.length === 0) usageError('--a, --b and at least one results file are required');
const a = options.a;
const bs = options.b.split(',').filter(Boolean);
const metric = options.metric!;

/** Stops with one `error:` line (exit 1): for input the pool cannot read. */
function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(1);
}

/** The saved runs of a results file (bench/results/*.json, as `npm run bench` writes them). */
function runsOf(file: string): SavedRun[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    fail(`${file}: not a readable results file (${(error as Error).message})`);
  }
  const runs = (parsed as { runs?: unknown } | null)?.runs;
  if (!Array.isArray(runs)) fail(`${file}: no "runs" array (is it a bench results .json?)`);
  return runs as SavedRun[];
}

/** Per-round ratios of `a` to the mean of `bs`, in one file's rounds. */
function ratiosIn(runs: readonly SavedRun[]): number[] {
  const byRound = new Map<number, Map<string, number>>();
  for (const run of runs) {
    const value = run[metric];
    if (typeof value !== 'number' || run.problem !== undefined) continue;
    const round = byRound.get(run.round) ?? new Map<string, number>();
    round.set(run.contender, value);
    byRound.set(run.round, round);
  }
  const ratios: number[] = [];
  for (const values of byRound.values()) {
    const x = values.get(a);
    const ys = bs.map((b) => values.get(b));
    if (x === undefined || ys.some((y) => y === undefined)) continue;
    const mean = (ys as number[]).reduce((sum, y) => sum + y, 0) / ys.length;
    if (mean !== 0) ratios.push(x / mean);
  }
  return ratios;
}

const ratios = files.flatMap((file) => ratiosIn(runsOf(file)));
const spread = spreadOf(ratios);
if (!spread || ratios.length < 3) fail(`fewer than 3 rounds with ${a} and ${bs.join(', ')} (${metric} measured) in the files given`);
const { low, high } = medianInterval(ratios);
const over = bs.length > 1 ? `the mean of ${bs.join(' and ')}` : bs[0];
console.log(
  `${a} / ${over}, ${metric}: median of ${ratios.length} per-round ratios from ${files.length} file(s) ${spread.median.toFixed(3)}x, 95% interval ${low.toFixed(3)}-${high.toFixed(3)} (rounds ${spread.min.toFixed(2)}-${spread.max.toFixed(2)})`,
);
