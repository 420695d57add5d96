/**
 * The cost of continuous profiling (issue 9): the benchmark operation with
 * `profiler.enabled` pushing to a local Pyroscope-compatible sink
 * (servers/profile-sink.ts) vs without. Seven alternating rounds by default
 * (the target is judged on the median of at least five).
 *
 * Warm phases (Scenario.warmPhases): both routers are started once and
 * loaded 15 s unmeasured, then each round loads one and then the other for
 * warm-up + duration while the waiting one sits on the load core. Profiling
 * runs for as long as a router does, so its cost is the cost to a warm
 * process; and the two phases of a round are seconds apart, so this
 * machine's wandering speed shifts both alike less than across a process
 * start (it does not cure a busy machine: docs/profiling.md). What
 * profiling costs a freshly started process is measured separately
 * (docs/profiling.md).
 *
 * The profiled router pushes every 5 s instead of the default 15 s, so
 * every phase (3 + 8 s) holds at least one push; encoding and sending three
 * times as often as by default makes the measured cost an upper bound of
 * the default's. The CPU sampler, the main cost, runs the whole time either
 * way.
 */
import type { AfterRoundsContext, Contender, Scenario, TargetCheck } from '../harness/scenario.js';
import { pairedRatioReference, ratioTarget } from '../harness/targets.js';
import { switchyard } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';

const OFF = 'switchyard';
const ON = 'switchyard-profiler';
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
  description: 'Switchyard with continuous profiling pushing to a local sink vs without, benchmark operation, warm phases, 7 rounds',
  request: GRAPHQL_POST,
  defaultRounds: 7,
  warmPhases: { settleSeconds: 15 },
  services: [{ program: 'profile-sink' }],
  ratioLabel: 'req/s / profiling off',
  contenders: [switchyard({ id: OFF, label: 'Switchyard, profiling off', baseline: OFF }), profiled()],
  expected: benchExpected,
  targets: (summaries) => [ratioTarget(summaries, ON, OFF, 'rps', { atLeast: 0.95 }), pairedRatioReference(summaries, ON, OFF, 'rps', 'req/s')],
  afterRounds: async (context) => [await pushesTarget(context)],
};
