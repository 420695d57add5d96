import { setTimeout as sleep } from 'node:timers/promises';
import type { Profile } from 'pprof-format';
import { EventLoopBlockMonitor } from './block-monitor.js';
import { ProfileBuilder, type SampleType } from './profile-builder.js';
import { SAMPLING_INTERVAL_MICROS, timeProfilerHub, type TimeWindow } from './time-profiler-hub.js';

/** Label the block capture puts on samples taken while the event loop was blocked. */
const BLOCKED_LABEL = 'event_loop';

/** Sample types of on-demand CPU profiles, named as Go and Pyroscope name them. */
export const CPU_SAMPLE_TYPES: readonly SampleType[] = [
  ['samples', 'count'],
  ['wall', 'nanoseconds'],
  ['cpu', 'nanoseconds'],
];

/** Sample types of continuous CPU profiles: no per-sample CPU time (see time-profiler-hub.ts). */
export const WALL_SAMPLE_TYPES: readonly SampleType[] = [
  ['samples', 'count'],
  ['wall', 'nanoseconds'],
];

const SAMPLING_PERIOD_NANOS = SAMPLING_INTERVAL_MICROS * 1000;

/**
 * One CPU profile from the chunks of a window. Samples are taken every
 * 10 ms of wall time while JavaScript (or GC) runs on the main thread; time
 * the event loop spends waiting is not sampled. `wall` is the sampled time;
 * with `cpuTime` (on-demand captures, which sample it) `cpu` is the
 * thread's CPU time between samples.
 */
export function cpuProfileOf(window: TimeWindow, cpuTime: boolean): Profile {
  const builder = new ProfileBuilder(cpuTime ? CPU_SAMPLE_TYPES : WALL_SAMPLE_TYPES, {
    startMs: window.startMs,
    durationMs: window.endMs - window.startMs,
    periodType: ['wall', 'nanoseconds'],
    period: SAMPLING_PERIOD_NANOS,
    defaultSampleType: cpuTime ? 'cpu' : 'wall',
  });
  for (const chunk of window.chunks) builder.appendProfile(chunk, { dropLabels: [BLOCKED_LABEL], renameTypes: { sample: 'samples' } });
  return builder.build();
}

/** Block profile: only the samples taken inside blocked windows; `delay` is their wall time. */
function blockProfileOf(window: TimeWindow, blocks: number): Profile {
  const builder = new ProfileBuilder(
    [
      ['samples', 'count'],
      ['delay', 'nanoseconds'],
    ],
    {
      startMs: window.startMs,
      durationMs: window.endMs - window.startMs,
      periodType: ['delay', 'nanoseconds'],
      period: SAMPLING_PERIOD_NANOS,
      comments: [`event loop blocked ${blocks} times for more than 10ms`],
    },
  );
  for (const chunk of window.chunks) {
    builder.appendProfile(chunk, {
      filter: (labels) => labels[BLOCKED_LABEL] === 'blocked',
      dropLabels: [BLOCKED_LABEL],
      renameTypes: { sample: 'samples', wall: 'delay' },
    });
  }
  return builder.build();
}

/** Samples the main thread for `seconds`; rejects with the signal's reason when aborted. */
export async function captureCpuProfile(seconds: number, signal: AbortSignal): Promise<Profile> {
  const session = timeProfilerHub.open({ detailed: true });
  try {
    await sleep(seconds * 1000, undefined, { signal });
  } catch (error) {
    session.close();
    throw error;
  }
  return cpuProfileOf(session.close(), true);
}

/** Watches the event loop for `seconds` and returns where it was blocked. */
export async function captureBlockProfile(seconds: number, signal: AbortSignal): Promise<Profile> {
  const monitor = new EventLoopBlockMonitor();
  const session = timeProfilerHub.open({ detailed: true });
  const removeLabeler = timeProfilerHub.addLabeler({
    beforeCut: () => monitor.check(),
    label: (sample) => (sample.leaf !== '(idle)' && monitor.blockedAt(sample.timestampMicros) ? { [BLOCKED_LABEL]: 'blocked' } : undefined),
  });
  monitor.start();
  try {
    await sleep(seconds * 1000, undefined, { signal });
    // Closing cuts the profile, and every cut first lets the monitor record a block that just ended.
    return blockProfileOf(session.close(), monitor.blockCount);
  } finally {
    session.close();
    monitor.stop();
    removeLabeler();
  }
}
