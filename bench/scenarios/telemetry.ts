/**
 * The cost of OpenTelemetry tracing (issue 23): the benchmark operation with
 * the telemetry plugin exporting every trace (sampling 1.0) and one in a
 * hundred (0.01) over OTLP/HTTP to a local sink (servers/otlp-sink.ts), vs
 * telemetry off. Targets: at most 10% fewer req/s at 1.0, at most 2% at
 * 0.01.
 *
 * Warm phases, as the profiling scenario (a few percent are the question,
 * and a process start moves req/s by that much on this machine): every
 * router is started and loaded 15 s unmeasured, then each round loads one
 * after the other; the rounds are split over three starts. An identical
 * second telemetry-off router is loaded too (A/A control): its ratio says
 * how far apart two routers that cost the same land in this run.
 *
 * The exporters keep their defaults (batches of 512 spans every 5 s from a
 * queue of 2,048): under full load at 1.0 the queue fills and spans are
 * dropped, as they would be in production; the sink's counters, shown
 * after the rounds, say how much arrived.
 */
import type { AfterRoundsContext, Contender, Scenario, TargetCheck } from '../harness/scenario.js';
import { pairedRatioReference, ratioTarget, referenceRatio } from '../harness/targets.js';
import { switchyard } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';

const OFF = 'switchyard-telemetry-off';
const ALL = 'switchyard-tracing-1';
const ONE_PERCENT = 'switchyard-tracing-0.01';
const TWIN = 'switchyard-telemetry-off-twin';
const SINK = 'otlp-sink';

/**
 * `BENCH_TELEMETRY_CPU_PROF=<dir>`: every router runs with `node --cpu-prof`
 * and writes a V8 CPU profile of its whole run (settling and rounds) to
 * `<dir>/<contender>/` when it stops: where tracing's cost goes.
 */
function profiled(contender: Contender): Contender {
  const dir = process.env.BENCH_TELEMETRY_CPU_PROF;
  if (!dir) return contender;
  return {
    ...contender,
    async launch(context) {
      const launch = await contender.launch(context);
      return { ...launch, args: ['--cpu-prof', `--cpu-prof-dir=${dir}/${contender.id}`, ...launch.args] };
    },
  };
}

/**
 * `BENCH_TELEMETRY_COMPARE_CLI=<main.mjs>`: one more contender, tracing
 * every request as `switchyard-tracing-1` does but run from another build
 * (say, the bench's build of an earlier commit, `bench/.work/switchyard/cli/main.mjs`
 * of a checkout of it): a change to tracing's cost measured against the
 * previous code within one run.
 */
function compared(contender: Contender, cli: string): Contender {
  return {
    ...contender,
    id: `${contender.id}-compare`,
    label: `${contender.label} (build ${cli})`,
    launch: (context) => contender.launch({ ...context, programs: { ...context.programs, switchyardCli: cli } }),
  };
}

const COMPARE_CLI = process.env.BENCH_TELEMETRY_COMPARE_CLI;

/** A router tracing `samplingRate` of its requests to the sink (whose URL is known at launch). */
function traced(id: string, samplingRate: number): Contender {
  const options = {
    id,
    label: `Switchyard, tracing, sampling ${samplingRate} to a local OTLP receiver`,
    baseline: OFF,
    checkLog: (log: string) =>
      !log.includes('Telemetry enabled')
        ? 'the router did not log "Telemetry enabled"'
        : log.includes('Telemetry export failed')
          ? 'an export to the sink failed (see its log)'
          : undefined,
  };
  return {
    ...switchyard(options),
    async launch(context) {
      const sink = context.services[SINK];
      if (!sink) throw new Error('the OTLP sink is not running');
      const config = {
        telemetry: { service_name: 'switchyard-bench', tracing: { enabled: true, sampling_rate: samplingRate, exporters: [{ exporter: 'http', endpoint: sink }] } },
      };
      return switchyard({ ...options, config }).launch(context);
    },
  };
}

/** Traces reached the sink while the traced routers were loaded, and none was refused. */
async function exportsTarget(context: AfterRoundsContext): Promise<TargetCheck> {
  const name = 'the OTLP sink received trace exports from the traced routers, none rejected';
  const sink = context.services[SINK];
  if (!sink || !(context.contenders.includes(ALL) || context.contenders.includes(ONE_PERCENT))) return { name, shown: 'not measured' };
  const counts = await sink.counts();
  const shown = `${counts.traces ?? 0} trace exports (${((counts.bytes ?? 0) / 1024 / 1024).toFixed(1)} MiB), ${counts.rejected ?? 0} rejected`;
  // A --check run stops each router within a second, before its first batch (every 5 s) goes out.
  if (context.checkOnly) return { name, shown: `${shown}; not judged with --check` };
  return { name, value: counts.traces, met: (counts.traces ?? 0) > 0 && (counts.rejected ?? 0) === 0, shown };
}

export const telemetryScenario: Scenario = {
  name: 'telemetry',
  description:
    'Switchyard tracing every request (sampling 1.0) and 1% (0.01) to a local OTLP/HTTP receiver vs telemetry off (and an identical second router as an A/A control), benchmark operation, warm phases, 6 rounds over 3 starts',
  request: GRAPHQL_POST,
  defaultRounds: 6,
  warmPhases: { settleSeconds: 15, starts: 3 },
  services: [{ program: 'otlp-sink' }],
  ratioLabel: 'req/s / telemetry off',
  contenders: [
    profiled(switchyard({ id: OFF, label: 'Switchyard, telemetry off', baseline: OFF })),
    profiled(traced(ALL, 1)),
    traced(ONE_PERCENT, 0.01),
    switchyard({ id: TWIN, label: 'Switchyard, telemetry off: a second process (A/A control)', baseline: OFF }),
    ...(COMPARE_CLI ? [compared(traced(ALL, 1), COMPARE_CLI)] : []),
  ],
  expected: benchExpected,
  targets: (summaries) => [
    ratioTarget(summaries, ALL, OFF, 'rps', { atLeast: 0.9 }),
    ratioTarget(summaries, ONE_PERCENT, OFF, 'rps', { atLeast: 0.98 }),
    pairedRatioReference(summaries, ALL, OFF, 'rps', 'req/s'),
    pairedRatioReference(summaries, ONE_PERCENT, OFF, 'rps', 'req/s'),
    referenceRatio(summaries, TWIN, OFF, 'rps', 'req/s of two identical routers (A/A control: how far apart this run puts equal costs)'),
  ],
  afterRounds: async (context) => [await exportsTarget(context)],
};
