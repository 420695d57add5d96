/**
 * The default scenario: the benchmark operation (about 89 KB, nested entity
 * jumps, `@requires`) over POST /graphql against every contender, and the
 * performance issue's targets.
 */
import { BENCH_QUERY, BENCH_VARIABLES, benchRequestBody } from '../graph/operation.js';
import { referenceResponse } from '../graph/reference.js';
import type { Scenario, TargetCheck } from '../harness/scenario.js';
import { ratioOf, type ContenderSummary, type Metric } from '../harness/summary.js';
import { apolloGateway, ceiling, floor, hiveGateway, switchyard } from './contenders.js';

/** POST /graphql with the benchmark operation, as JSON. */
export const GRAPHQL_POST = {
  method: 'POST' as const,
  path: '/graphql',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: benchRequestBody(),
};

/** The reference answer to the benchmark operation. */
export function benchExpected(supergraphSdl: string): Promise<string> {
  return referenceResponse(supergraphSdl, BENCH_QUERY, { ...BENCH_VARIABLES });
}

const SHARING = 'switchyard';
const NO_SHARING = 'switchyard-nosharing';

type Summaries = ReadonlyMap<string, ContenderSummary>;

function times(value: number): string {
  return `${value.toFixed(2)}x`;
}

/** `a`'s req/s over `b`'s must be at least `atLeast`. */
function throughputTarget(summaries: Summaries, a: string, b: string, atLeast: number): TargetCheck {
  const sa = summaries.get(a);
  const sb = summaries.get(b);
  const name = `${sa?.contender.label ?? a} (${a}) >= ${atLeast}x ${sb?.contender.label ?? b} (${b}), req/s`;
  const ratio = sa && sb ? ratioOf(sa, sb) : undefined;
  if (!ratio) return { name, shown: 'not measured' };
  return { name, value: ratio.median, spread: [ratio.min, ratio.max], met: ratio.median >= atLeast, shown: times(ratio.median) };
}

function median(summaries: Summaries, id: string, metric: Metric): number | undefined {
  return summaries.get(id)?.metrics[metric]?.median;
}

function fetchesTarget(summaries: Summaries, router: string, reference: string): TargetCheck {
  const name = `subgraph requests of one request: ${router} = ${reference}`;
  const a = median(summaries, router, 'fetchesAlone');
  const b = median(summaries, reference, 'fetchesAlone');
  if (a === undefined || b === undefined) return { name, shown: 'not measured' };
  return { name, value: a, met: a === b, shown: `${a} vs ${b}` };
}

function p99Target(summaries: Summaries): TargetCheck {
  const ours = median(summaries, SHARING, 'latencyP99Ms');
  const others = [...summaries.values()].filter((s) => s.contender.role === 'router' && !s.contender.id.startsWith('switchyard'));
  const name = `p99 of ${SHARING} lower than every other router's`;
  const theirs = others.map((s) => s.metrics.latencyP99Ms?.median).filter((v): v is number => v !== undefined);
  if (ours === undefined || theirs.length === 0) return { name, shown: 'not measured' };
  const best = Math.min(...theirs);
  return { name, value: ours, met: ours < best, shown: `${ours.toFixed(1)} ms vs best other ${best.toFixed(1)} ms` };
}

function rssTarget(summaries: Summaries): TargetCheck {
  const name = `peak RSS under load of ${SHARING} <= half of hive-gateway's`;
  const ours = median(summaries, SHARING, 'rssPeakMB');
  const hive = median(summaries, 'hive-gateway', 'rssPeakMB');
  if (ours === undefined || hive === undefined) return { name, shown: 'not measured' };
  return { name, value: ours / hive, met: ours <= hive / 2, shown: `${ours.toFixed(0)} MB vs ${hive.toFixed(0)} MB (${times(ours / hive)})` };
}

export const federatedScenario: Scenario = {
  name: 'federated',
  description: 'top products -> reviews -> authors -> their reviews -> products (@requires), about 89 KB, POST /graphql',
  request: GRAPHQL_POST,
  ratioLabel: 'req/s / Switchyard (same sharing)',
  contenders: [
    switchyard({ sharing: 'on', baseline: SHARING }),
    switchyard({ id: NO_SHARING, sharing: 'off', baseline: NO_SHARING }),
    hiveGateway({ rust: false, baseline: SHARING }),
    hiveGateway({ rust: true, baseline: SHARING }),
    apolloGateway({ baseline: NO_SHARING }),
    floor({ sharing: 'off', baseline: NO_SHARING }),
    floor({ sharing: 'on', baseline: SHARING }),
    ceiling({ baseline: SHARING }),
  ],
  expected: benchExpected,
  targets: (summaries) => [
    throughputTarget(summaries, SHARING, 'hive-gateway', 4),
    throughputTarget(summaries, SHARING, 'hive-gateway-rust', 1.3),
    throughputTarget(summaries, SHARING, 'floor-sharing', 0.6),
    throughputTarget(summaries, NO_SHARING, 'floor', 0.6),
    fetchesTarget(summaries, SHARING, 'floor'),
    p99Target(summaries),
    rssTarget(summaries),
  ],
};
