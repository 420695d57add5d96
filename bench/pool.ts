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

const { values: options, positionals: files } = parseArgs({
  options: { a: { type: 'string' }, b: { type: 'string' }, metric: { type: 'string', default: 'rps' } },
  allowPositionals: true,
});
if (!options.a || !options.b || files.length === 0) {
  console.error('usage: npm run bench:pool -- --a <contender> --b <contender>[,<contender>...] [--metric rps] <results.json>...');
  process.exit(2);
}
const a = options.a;
const bs = options.b.split(',').filter(Boolean);
const metric = options.metric!;

/** The saved runs of a results file (bench/results/*.json, as `npm run bench` writes them). */
function runsOf(file: string): SavedRun[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: not a readable results file (${(error as Error).message})`);
  }
  const runs = (parsed as { runs?: unknown }).runs;
  if (!Array.isArray(runs)) throw new Error(`${file}: no "runs" array (is it a bench results .json?)`);
  return runs as SavedRun[];
}

const ratios: number[] = [];
let rounds = 0;
for (const file of files) {
  let runs: SavedRun[];
  try {
    runs = runsOf(file);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const byRound = new Map<number, Map<string, number>>();
  for (const run of runs) {
    const value = run[metric];
    if (typeof value !== 'number' || run.problem !== undefined) continue;
    const round = byRound.get(run.round) ?? new Map<string, number>();
    round.set(run.contender, value);
    byRound.set(run.round, round);
  }
  for (const values of byRound.values()) {
    const x = values.get(a);
    const ys = bs.map((b) => values.get(b));
    if (x === undefined || ys.some((y) => y === undefined)) continue;
    const mean = (ys as number[]).reduce((sum, y) => sum + y, 0) / ys.length;
    if (mean === 0) continue;
    ratios.push(x / mean);
    rounds += 1;
  }
}
const spread = spreadOf(ratios);
if (!spread || rounds < 3) {
  console.error(`fewer than 3 rounds with ${a} and ${bs.join(', ')} in the files given`);
  process.exit(1);
}
const { low, high } = medianInterval(ratios);
const over = bs.length > 1 ? `the mean of ${bs.join(' and ')}` : bs[0];
console.log(`${a} / ${over}, ${metric}: median of ${rounds} per-round ratios from ${files.length} file(s) ${spread.median.toFixed(3)}x, 95% interval ${low.toFixed(3)}-${high.toFixed(3)} (rounds ${spread.min.toFixed(2)}-${spread.max.toFixed(2)})`);
