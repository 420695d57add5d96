/**
 * Compares the planner's speed in this tree with another checkout of the
 * repository (for example the last commit), on the planner benchmark's
 * operation, in one process: each round times both trees back to back, in
 * alternating order, so load on the machine hits both alike. Prints the
 * median of each measurement per tree and the median of the per-round
 * ratios (this tree / the other). Times are the process's CPU time, not wall
 * time: on a busy machine the scheduler's pauses would swamp a 10% difference.
 *
 *   git archive HEAD | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   npx tsx bench/planner/compare-trees.ts /tmp/base [--rounds 15]
 *
 * The other tree needs the same module layout (`src/compose`,
 * `src/kernel/graph`, `src/kernel/plan/build-plan.ts`, `bench/planner/schema.ts`).
 */
import { resolve } from 'node:path';
import { parse, type DocumentNode } from 'graphql';

/** The pieces of one tree the comparison calls. */
interface Tree {
  readonly label: string;
  /** Parse + plan on a graph index built just before (untimed). */
  cold(): number;
  /** Parse + plan on the warm index. */
  warm(): number;
  /** The router's plan-cache look-up, 1000 calls per sample. */
  cacheHit(): number;
}

const MEASUREMENTS = ['cold plan', 'warm plan', 'plan-cache hit'] as const;
type Measurement = (typeof MEASUREMENTS)[number];

async function loadTree(root: string, label: string): Promise<Tree> {
  const { composeSubgraphs } = await import(`${root}/src/compose/index.ts`);
  const { FederationIndex } = await import(`${root}/src/kernel/graph/federation-index.ts`);
  const { LoadedGraph } = await import(`${root}/src/kernel/graph/loaded-graph.ts`);
  const { buildQueryPlan } = await import(`${root}/src/kernel/plan/build-plan.ts`);
  const { PLANNER_OPERATION_NAME: name, PLANNER_QUERY: query, plannerSubgraphs } = await import(`${root}/bench/planner/schema.ts`);
  const composed = composeSubgraphs(
    (plannerSubgraphs as { name: string; sdl: string }[]).map((s) => ({ name: s.name, url: `http://127.0.0.1:9/${s.name}`, sdl: s.sdl })),
    'the planner benchmark subgraphs',
  );
  const graph = new LoadedGraph({ ...composed, origin: 'bench/planner/schema.ts' }, 1024);
  const plan = (index: unknown, document: DocumentNode) => buildQueryPlan(index, document, name);
  graph.plans.set(`${name}\n${query}`, plan(graph.index, parse(query)));
  let fresh = new FederationIndex(graph.supergraph);
  return {
    label,
    cold: () => cpuMedianUs(() => plan(fresh, parse(query)), { samples: 40, prepare: () => (fresh = new FederationIndex(graph.supergraph)) }),
    warm: () => cpuMedianUs(() => plan(graph.index, parse(query)), { samples: 40 }),
    cacheHit: () => cpuMedianUs(() => graph.plans.get(`${name}\n${query}`), { samples: 20, batch: 1000 }),
  };
}

/** Median CPU time (user + system, microseconds) per call over `samples` samples of `batch` calls. */
function cpuMedianUs(work: () => unknown, options: { samples: number; batch?: number; prepare?: () => void }): number {
  const { samples, batch = 1, prepare } = options;
  const perCall: number[] = [];
  let sink: unknown;
  for (let i = 0; i < samples; i++) {
    prepare?.();
    const before = process.cpuUsage();
    for (let j = 0; j < batch; j++) sink = work();
    const spent = process.cpuUsage(before);
    perCall.push((spent.user + spent.system) / batch);
  }
  // Keep the result observable so the work cannot be optimized away.
  if (sink === Symbol.for('never')) console.log(sink);
  return median(perCall);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function measure(tree: Tree, measurement: Measurement): number {
  if (measurement === 'cold plan') return tree.cold();
  if (measurement === 'warm plan') return tree.warm();
  return tree.cacheHit();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const other = args.find((a) => !a.startsWith('--'));
  if (!other) {
    console.error('usage: npx tsx bench/planner/compare-trees.ts <other-tree> [--rounds N]');
    process.exit(2);
  }
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 15;
  if (!Number.isInteger(rounds) || rounds < 1) {
    console.error('--rounds takes a whole number of rounds (at least 1)');
    process.exit(2);
  }
  const here = await loadTree(resolve(import.meta.dirname, '../..'), 'this tree');
  const base = await loadTree(resolve(other), resolve(other));
  const samples = new Map<Measurement, { here: number[]; base: number[]; ratios: number[] }>(MEASUREMENTS.map((m) => [m, { here: [], base: [], ratios: [] }]));
  for (let round = 0; round < rounds; round++) {
    for (const measurement of MEASUREMENTS) {
      const entry = samples.get(measurement)!;
      // Alternate which tree goes first: warm-up and drift then favour neither.
      const [first, second] = round % 2 === 0 ? [here, base] : [base, here];
      const a = measure(first, measurement);
      const b = measure(second, measurement);
      const [h, o] = first === here ? [a, b] : [b, a];
      entry.here.push(h);
      entry.base.push(o);
      entry.ratios.push(h / o);
    }
  }
  console.log(`| measurement (median of ${rounds} rounds) | this tree | ${base.label} | ratio (median per round) |`);
  console.log('|---|---:|---:|---:|');
  for (const [measurement, entry] of samples) {
    console.log(`| ${measurement} | ${median(entry.here).toFixed(2)} us | ${median(entry.base).toFixed(2)} us | ${median(entry.ratios).toFixed(3)} |`);
  }
}

await main();
