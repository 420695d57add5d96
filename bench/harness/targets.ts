/** Targets that compare two contenders' medians, for scenarios to list. */
import type { TargetCheck } from './scenario.js';
import { perRoundRatios, ratioOf, spreadOf, type ContenderSummary, type Metric } from './summary.js';

/** Summaries by contender id. */
export type Summaries = ReadonlyMap<string, ContenderSummary>;

/** A bound on a ratio of medians. */
export type RatioBound = { readonly atLeast: number } | { readonly atMost: number };

const METRIC_NAMES: Partial<Record<Metric, string>> = {
  rps: 'req/s',
  latencyP50Ms: 'p50 latency',
  latencyP99Ms: 'p99 latency',
};

/**
 * `a`'s median of `metric` over `b`'s, within `bound`; the spread pairs
 * runs of the same round. `shown` adds both medians.
 */
export function ratioTarget(summaries: Summaries, a: string, b: string, metric: Metric, bound: RatioBound): TargetCheck {
  const relation = 'atLeast' in bound ? `>= ${bound.atLeast}x` : `<= ${bound.atMost}x`;
  const name = `${a} ${relation} ${b}, ${METRIC_NAMES[metric] ?? metric}`;
  const sa = summaries.get(a);
  const sb = summaries.get(b);
  const ratio = sa && sb ? ratioOf(sa, sb, metric) : undefined;
  if (!ratio) return { name, shown: 'not measured' };
  const met = 'atLeast' in bound ? ratio.median >= bound.atLeast : ratio.median <= bound.atMost;
  const digits = metric === 'rps' ? 0 : 2;
  const medians = `${sa?.metrics[metric]?.median.toFixed(digits)} vs ${sb?.metrics[metric]?.median.toFixed(digits)}`;
  return { name, value: ratio.median, spread: [ratio.min, ratio.max], met, shown: `${ratio.median.toFixed(3)}x (${medians})` };
}

/** `a`'s median of `metric` over `b`'s, shown for context and not judged; `what` names the metric. */
export function referenceRatio(summaries: Summaries, a: string, b: string, metric: Metric, what: string): TargetCheck {
  const { value, spread, shown } = ratioTarget(summaries, a, b, metric, { atLeast: 0 });
  return { name: `reference: ${a} / ${b}, ${what}`, value, spread, shown };
}

/** Resamples drawn for a bootstrap interval. */
const BOOTSTRAP_RESAMPLES = 4000;

/** A small seeded generator (mulberry32), so a report's interval is the same on every rendering of the same runs. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The median of the per-round ratios `a` / `b` (each round's two runs are
 * seconds apart, so a machine whose speed wanders shifts both alike) with a
 * 95% bootstrap interval of that median: how far the median could move on
 * another run of as many rounds. Shown for context, not judged.
 */
export function pairedRatioReference(summaries: Summaries, a: string, b: string, metric: Metric, what: string): TargetCheck {
  const name = `reference: ${a} / ${b}, ${what}, median of per-round ratios with a 95% bootstrap interval`;
  const sa = summaries.get(a);
  const sb = summaries.get(b);
  const ratios = sa && sb ? perRoundRatios(sa, sb, metric) : [];
  const perRound = spreadOf(ratios);
  if (!perRound || ratios.length < 3) return { name, shown: 'not measured (fewer than 3 rounds)' };
  const { low, high } = medianInterval(ratios);
  return {
    name,
    value: perRound.median,
    spread: [perRound.min, perRound.max],
    shown: `${perRound.median.toFixed(3)}x (95% interval ${low.toFixed(3)}-${high.toFixed(3)}, ${ratios.length} rounds)`,
  };
}

/** A 95% bootstrap interval of the median of `values` (seeded by their count: the same values give the same interval). */
export function medianInterval(values: readonly number[]): { readonly low: number; readonly high: number } {
  const random = seededRandom(values.length);
  const medians: number[] = [];
  for (let i = 0; i < BOOTSTRAP_RESAMPLES; i++) medians.push(spreadOf(values.map(() => values[Math.floor(random() * values.length)]!))!.median);
  medians.sort((x, y) => x - y);
  // The 2.5th and 97.5th percentiles: as many resampled medians below the interval as above it.
  return { low: medians[Math.ceil(BOOTSTRAP_RESAMPLES * 0.025) - 1]!, high: medians[BOOTSTRAP_RESAMPLES - Math.ceil(BOOTSTRAP_RESAMPLES * 0.025)]! };
}

/** The median of `metric` of contender `id` equals `expected` (e.g. 0 subgraph requests). */
export function medianEquals(summaries: Summaries, id: string, metric: Metric, expected: number, what: string): TargetCheck {
  const name = `${what} of ${id} = ${expected}`;
  const spread = summaries.get(id)?.metrics[metric];
  if (!spread) return { name, shown: 'not measured' };
  return { name, value: spread.median, spread: [spread.min, spread.max], met: spread.median === expected, shown: spread.median.toFixed(2) };
}
