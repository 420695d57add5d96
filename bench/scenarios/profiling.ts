/**
 * The cost of continuous profiling (issue 9): the benchmark operation with
 * `profiler.enabled` pushing to a local Pyroscope-compatible sink
 * (servers/profile-sink.ts) vs without. Five alternating rounds by default:
 * the target is judged on the median of at least five.
 *
 * The profiled router pushes every 5 s instead of the default 15 s, so that
 * every run (about 12 s from start to stop) pushes profiles while it is
 * loaded; encoding and sending three times as often as by default makes the
 * measured cost an upper bound of the default's. The CPU sampler, the main
 * cost, runs the whole time either way.
 */
import type { AfterRoundsContext, Contender, Scenario, TargetCheck } from '../harness/scenario.js';
import { ratioTarget } from '../harness/targets.js';
import { switchyard } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';

const OFF = 'switchyard';
const ON = 'switchyard-profiler';
const SINK = 'profile-sink';
const UPLOAD_INTERVAL = '5s';

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

/** The profiled runs did push: at least one CPU profile per run, none rejected. */
async function pushesTarget(context: AfterRoundsContext): Promise<TargetCheck> {
  const name = `the profile sink received CPU profiles from every ${ON} run, none rejected`;
  const sink = context.services[SINK];
  if (!sink || !context.contenders.includes(ON)) return { name, shown: 'not measured' };
  const counts = await sink.counts();
  const shown = `${counts.cpu ?? 0} CPU + ${counts.heap ?? 0} heap pushes (${((counts.bytes ?? 0) / 1024).toFixed(0)} KiB), ${counts.rejected ?? 0} rejected, ${context.rounds} run(s)`;
  // A --check run stops each router within seconds, before its first push.
  if (context.checkOnly) return { name, shown: `${shown}; not judged with --check` };
  return { name, value: counts.cpu, met: (counts.cpu ?? 0) >= context.rounds && (counts.rejected ?? 0) === 0, shown };
}

export const profilingScenario: Scenario = {
  name: 'profiling',
  description: 'Switchyard with continuous profiling pushing to a local sink vs without, benchmark operation, 5 rounds',
  request: GRAPHQL_POST,
  defaultRounds: 5,
  services: [{ program: 'profile-sink' }],
  ratioLabel: 'req/s / profiling off',
  contenders: [switchyard({ id: OFF, label: 'Switchyard, profiling off', baseline: OFF }), profiled()],
  expected: benchExpected,
  targets: (summaries) => [ratioTarget(summaries, ON, OFF, 'rps', { atLeast: 0.95 })],
  afterRounds: async (context) => [await pushesTarget(context)],
};
