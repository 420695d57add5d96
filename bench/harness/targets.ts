/** Targets that compare two contenders' medians, for scenarios to list. */
import type { TargetCheck } from './scenario.js';
import { ratioOf, type ContenderSummary, type Metric } from './summary.js';

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

/** The median of `metric` of contender `id` equals `expected` (e.g. 0 subgraph requests). */
export function medianEquals(summaries: Summaries, id: string, metric: Metric, expected: number, what: string): TargetCheck {
  const name = `${what} of ${id} = ${expected}`;
  const spread = summaries.get(id)?.metrics[metric];
  if (!spread) return { name, shown: 'not measured' };
  return { name, value: spread.median, spread: [spread.min, spread.max], met: spread.median === expected, shown: spread.median.toFixed(2) };
}
