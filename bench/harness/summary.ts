/** Medians and spreads over rounds, per contender, and ratios between contenders. */
import type { RunResult } from './measure.js';
import type { Contender } from './scenario.js';

/** A value over rounds. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** Rounds that gave a value. */
  readonly n: number;
}

/** The numeric measurements of a run, by name. */
export type Metric = {
  [K in keyof RunResult]-?: NonNullable<RunResult[K]> extends number ? K : never;
}[keyof RunResult];

const METRICS: readonly Metric[] = [
  'rps',
  'latencyP50Ms',
  'latencyP99Ms',
  'latencyMeanMs',
  'cpuMsPerRequest',
  'rssIdleMB',
  'rssPeakMB',
  'rssEndMB',
  'subgraphRequestsPerRequest',
  'fetchesAlone',
  'responseBytes',
  'loadSideBusy',
  'startupMs',
  'firstResponseMs',
  'errors',
];

/** One contender over all rounds. */
export interface ContenderSummary {
  readonly contender: Contender;
  readonly runs: readonly RunResult[];
  /** Problems of failed runs, one per run. */
  readonly problems: readonly string[];
  /** Each metric's median and min-max over the successful runs. */
  readonly metrics: Partial<Record<Metric, Spread>>;
  /** req/s over the baseline's (`contender.baseline`): median ratio and per-round min-max. */
  readonly ratio?: Spread;
  /** False when some successful run's body was deep-equal but not byte-identical. */
  readonly exactBytes: boolean;
}

export function spreadOf(values: readonly number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, n: sorted.length };
}

function valuesOf(runs: readonly RunResult[], metric: Metric): number[] {
  return runs.flatMap((run) => (typeof run[metric] === 'number' ? [run[metric]] : []));
}

/**
 * Summaries by contender id. A ratio's spread pairs runs of the same round,
 * which alternate contenders, so a slow moment of the machine hits both.
 */
export function summarize(contenders: readonly Contender[], results: readonly RunResult[]): Map<string, ContenderSummary> {
  const summaries = new Map<string, ContenderSummary>();
  for (const contender of contenders) {
    const runs = results.filter((r) => r.contender === contender.id);
    const ok = runs.filter((r) => !r.problem);
    const metrics: Partial<Record<Metric, Spread>> = {};
    for (const metric of METRICS) {
      const spread = spreadOf(valuesOf(ok, metric));
      if (spread) metrics[metric] = spread;
    }
    summaries.set(contender.id, {
      contender,
      runs,
      problems: runs.flatMap((r) => (r.problem ? [r.problem] : [])),
      metrics,
      exactBytes: ok.every((r) => r.exactBytes !== false),
    });
  }
  for (const [id, summary] of summaries) {
    const baselineId = summary.contender.baseline;
    const baseline = baselineId ? summaries.get(baselineId) : undefined;
    if (!baseline) continue;
    const ratio = ratioOf(summary, baseline);
    if (ratio) summaries.set(id, { ...summary, ratio });
  }
  return summaries;
}

/** `a`'s metric over `b`'s in each round where both runs succeeded and measured it. */
export function perRoundRatios(a: ContenderSummary, b: ContenderSummary, metric: Metric): number[] {
  const ratios: number[] = [];
  for (const run of a.runs) {
    if (run.problem) continue;
    const other = b.runs.find((r) => r.round === run.round && !r.problem);
    const x = run[metric];
    const y = other?.[metric];
    if (typeof x === 'number' && typeof y === 'number' && y !== 0) ratios.push(x / y);
  }
  return ratios;
}

/** `a`'s metric over `b`'s: the ratio of medians, with the min-max of same-round ratios. */
export function ratioOf(a: ContenderSummary, b: ContenderSummary, metric: Metric = 'rps'): Spread | undefined {
  const am = a.metrics[metric];
  const bm = b.metrics[metric];
  if (!am || !bm || bm.median === 0) return undefined;
  const perRound = perRoundRatios(a, b, metric);
  const spread = spreadOf(perRound);
  return { median: am.median / bm.median, min: spread?.min ?? am.median / bm.median, max: spread?.max ?? am.median / bm.median, n: perRound.length };
}
