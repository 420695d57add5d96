/**
 * The cost of continuous profiling (issue 9): the benchmark operation with
 * `profiler.enabled` pushing to a local Pyroscope-compatible sink
 * (servers/profile-sink.ts) vs without. Eight alternating rounds by default
 * (the target is judged on the median of at least five).
 *
 * Warm phases (Scenario.warmPhases): the routers are started and loaded
 * 15 s unmeasured, then each round loads one after the other for warm-up +
 * duration while the waiting ones sit on the load core. The rounds are
 * split over four starts of every router, so the median spans four
 * processes of each. Profiling runs for as long as a router does, so its
 * cost is the cost to a warm process; and the phases of a round are
 * seconds apart, so this machine's wandering speed shifts them alike less
 * than across a process start (it does not cure a busy machine:
 * docs/profiling.md). What profiling costs a freshly started process is
 * measured separately (docs/profiling.md).
 *
 * A third router, the same as the unprofiled one (`switchyard-twin`), is
 * loaded in every round too: an A/A control. Two identical processes differ
 * on this machine by more than the target allows (each process keeps its
 * own code layout and JIT decisions for the whole run, and the machine's
 * speed wanders between phases), so the twin's ratio, reported beside the
 * target, says how far apart two routers that cost the same land in this
 * run: a profiled ratio inside that band cannot be told from no cost.
 *
 * The profiled router pushes every 5 s instead of the default 15 s, so
 * every phase (3 + 8 s) holds at least one push; encoding and sending three
 * times as often as by default makes the measured cost an upper bound of
 * the default's. The CPU sampler, the main cost, runs the whole time either
 * way.
 */
import type { AfterRoundsContext, Contender, Scenario, TargetCheck } from '../harness/scenario.js';
import { pairedRatioReference, ratioTarget, referenceRatio } from '../harness/targets.js';
import { switchyard } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';

const OFF = 'switchyard';
const ON = 'switchyard-profiler';
const TWIN = 'switchyard-twin';
const SINK = 'profile-sink';
const UPLOAD_INTERVAL_SECONDS = 5;
const UPLOAD_INTERVAL = `${UPLOAD_INTERVAL_SECONDS}s`;

function profiled(): Contender {
  const base = switchyard({
    id: ON,
    label: `Switchyard, continuous profiling (push every ${UPLOAD_INTERVAL})`,
    baseline: OFF,
    checkLog: (log) =>
      !log.includes('Continuous profiling enabled')
        ? 'the router did not log "Continuous profiling enabled"'
        : log.includes('PROFILE_PUSH_FAILED')
          ? 'a profile push failed (see its log)'
          : undefined,
  });
  return {
    ...base,
    async launch(context) {
      const sink = context.services[SINK];
      if (!sink) throw new Error('the profile sink is not running');
      const launch = await base.launch(context);
      return {
        ...launch,
        env: { ...launch.env, PROFILER_ENABLED: 'true', PROFILER_SERVER_ADDRESS: sink, PROFILER_UPLOAD_INTERVAL: UPLOAD_INTERVAL },
      };
    },
  };
}

/**
 * The profiled router did push while it was loaded: at least one CPU
 * profile per upload interval of its load phases (per phase when phases are
 * shorter than the interval), none rejected.
 */
async function pushesTarget(context: AfterRoundsContext): Promise<TargetCheck> {
  const name = `the profile sink received CPU profiles from ${ON}, at least one per ${UPLOAD_INTERVAL_SECONDS} s of its load phases (or per phase, if fewer), none rejected`;
  const sink = context.services[SINK];
  if (!sink || !context.contenders.includes(ON)) return { name, shown: 'not measured' };
  const counts = await sink.counts();
  const wanted = Math.min(context.rounds, Math.max(1, Math.floor((context.rounds * context.phaseSeconds) / UPLOAD_INTERVAL_SECONDS)));
  const shown = `${counts.cpu ?? 0} CPU + ${counts.heap ?? 0} heap pushes (${((counts.bytes ?? 0) / 1024).toFixed(0)} KiB), ${counts.rejected ?? 0} rejected; ${wanted} wanted for ${context.rounds} phase(s) of ${context.phaseSeconds} s`;
  // A --check run stops each router within seconds, before its first push.
  if (context.checkOnly) return { name, shown: `${shown}; not judged with --check` };
  return { name, value: counts.cpu, met: (counts.cpu ?? 0) >= wanted && (counts.rejected ?? 0) === 0, shown };
}

export const profilingScenario: Scenario = {
  name: 'profiling',
  description:
    'Switchyard with continuous profiling pushing to a local sink vs without (and an identical second router as an A/A control), benchmark operation, warm phases, 8 rounds over 4 starts',
  request: GRAPHQL_POST,
  defaultRounds: 8,
  warmPhases: { settleSeconds: 15, starts: 4 },
  services: [{ program: 'profile-sink' }],
  ratioLabel: 'req/s / profiling off',
  contenders: [
    switchyard({ id: OFF, label: 'Switchyard, profiling off', baseline: OFF }),
    profiled(),
    switchyard({ id: TWIN, label: 'Switchyard, profiling off: a second process (A/A control)', baseline: OFF }),
  ],
  expected: benchExpected,
  targets: (summaries) => [
    ratioTarget(summaries, ON, OFF, 'rps', { atLeast: 0.95 }),
    pairedRatioReference(summaries, ON, OFF, 'rps', 'req/s'),
    referenceRatio(summaries, TWIN, OFF, 'rps', 'req/s of two identical routers (A/A control: how far apart this run puts equal costs)'),
    pairedRatioReference(summaries, TWIN, OFF, 'rps', 'req/s of two identical routers'),
  ],
  afterRounds: async (context) => [await pushesTarget(context)],
};
