import { time, type LabelSet } from '@datadog/pprof';
import { RouterError } from '../../src/index.js';
import type { ProfileData } from './profile-builder.js';

type GenerateLabels = NonNullable<Parameters<typeof time.stop>[1]>;

/** Sampling interval of the shared time profiler: 100 samples a second, as Go's CPU profiler. */
export const SAMPLING_INTERVAL_MICROS = 10_000;

/** Samples a second, as the profile server's `sampleRate` wants it. */
export const SAMPLE_RATE_HZ = 1_000_000 / SAMPLING_INTERVAL_MICROS;

/** One sample the labelers see: the leaf function and when it was taken. */
export interface SampleMoment {
  /** Leaf function name; `(idle)` while the event loop waits. */
  readonly leaf: string;
  /** When the sample was taken, epoch microseconds. */
  readonly timestampMicros: number;
}

/** Adds labels to samples as chunks are cut (for example `event_loop=blocked`). */
export interface SampleLabeler {
  /**
   * Runs just before every cut, whoever asks for it: a labeler that learns
   * about samples from its own timer (the block monitor) catches up here, so
   * a cut that happens to run before that timer still labels every sample.
   */
  beforeCut?(): void;
  /** Labels for one sample, or undefined for none. */
  label(sample: SampleMoment): LabelSet | undefined;
}

/** What a session collected between two cuts. */
export interface TimeWindow {
  /** Profiles cut while the session was open, oldest first (each covers part of the window). */
  readonly chunks: readonly ProfileData[];
  /** Start of the window, epoch milliseconds. */
  readonly startMs: number;
  /** End of the window, epoch milliseconds. */
  readonly endMs: number;
}

/** A consumer of the shared time profiler (a capture, or continuous profiling). */
export interface TimeSession {
  /** Cuts the profile now and returns what this session collected since it opened or last took. */
  take(): TimeWindow;
  /** Like `take`, then leaves; the profiler stops when no session remains. */
  close(): TimeWindow;
}

interface SessionState {
  chunks: ProfileData[];
  startMs: number;
  open: boolean;
  /** Needs per-sample CPU time and timestamps (see `TimeProfilerHub.open`). */
  readonly detailed: boolean;
}

/** How the profiler runs: plain wall-time samples, or with each sample's CPU time and timestamp. */
type SamplingMode = 'plain' | 'detailed';

/**
 * V8 has one wall-clock/CPU sampler a process and @datadog/pprof drives it
 * through module state, so every consumer shares one profiler: it runs
 * while any session is open, and whenever a session takes its window the
 * profile is cut and the chunk goes to every open session. A capture that
 * spans several cuts merges its chunks. This is how on-demand captures and
 * continuous profiling run together.
 *
 * Per-sample CPU time and timestamps (contexts) cost about a tenth of a
 * busy router's throughput, so the profiler records them only while a
 * session that needs them is open (an on-demand CPU or block capture):
 * opening the first such session cuts the profile and restarts the sampler
 * with them, closing the last one restarts it without.
 */
class TimeProfilerHub {
  private readonly sessions = new Set<SessionState>();
  private readonly labelers = new Set<SampleLabeler>();
  private mode: SamplingMode | undefined;

  /** Joins the profiler; `detailed` asks for per-sample CPU time and timestamps. */
  open(options: { readonly detailed?: boolean } = {}): TimeSession {
    const detailed = options.detailed ?? false;
    if (this.sessions.size === 0) {
      if (time.isStarted()) {
        const message = '[profiling] the V8 time profiler is already driven by another library in this process (for example dd-trace); remove one of them';
        throw new RouterError('PROFILING_UNAVAILABLE', message, { plugin: 'profiling', status: 503 });
      }
      this.start(detailed ? 'detailed' : 'plain');
    } else if (detailed && this.mode === 'plain') {
      // The sessions already open keep what was sampled so far; the new one starts after the switch.
      const chunk = this.cut(false);
      for (const session of this.sessions) session.chunks.push(chunk);
      this.start('detailed');
    }
    const state: SessionState = { chunks: [], startMs: Date.now(), open: true, detailed };
    this.sessions.add(state);
    return {
      take: () => this.take(state, false),
      close: () => this.take(state, true),
    };
  }

  /** Registers a labeler until the returned function is called. */
  addLabeler(labeler: SampleLabeler): () => void {
    this.labelers.add(labeler);
    return () => this.labelers.delete(labeler);
  }

  /** The sampling mode now (undefined when stopped); for tests. */
  get samplingMode(): SamplingMode | undefined {
    return this.mode;
  }

  private start(mode: SamplingMode): void {
    const detailed = mode === 'detailed';
    time.start({ intervalMicros: SAMPLING_INTERVAL_MICROS, withContexts: detailed, collectCpuTime: detailed, workaroundV8Bug: true });
    this.mode = mode;
  }

  /** Stops the sampler (restarting it in the same mode when `restart`) and returns the labelled samples so far. */
  private cut(restart: boolean): ProfileData {
    for (const labeler of this.labelers) labeler.beforeCut?.();
    return time.stop(restart, this.labels);
  }

  private take(state: SessionState, leave: boolean): TimeWindow {
    if (!state.open) return { chunks: [], startMs: state.startMs, endMs: state.startMs };
    const remaining = [...this.sessions].filter((session) => !leave || session !== state);
    const next: SamplingMode | undefined = remaining.length === 0 ? undefined : remaining.some((session) => session.detailed) ? 'detailed' : 'plain';
    const chunk = this.cut(next === this.mode);
    if (next === undefined) this.mode = undefined;
    else if (next !== this.mode) this.start(next);
    for (const session of this.sessions) session.chunks.push(chunk);
    const endMs = Date.now();
    const window: TimeWindow = { chunks: state.chunks, startMs: state.startMs, endMs };
    state.chunks = [];
    state.startMs = endMs;
    if (leave) {
      state.open = false;
      this.sessions.delete(state);
    }
    return window;
  }

  private readonly labels: GenerateLabels = ({ node, context }) => {
    if (context === undefined || this.labelers.size === 0) return {};
    const sample: SampleMoment = { leaf: node.name ?? '', timestampMicros: Number(context.timestamp) };
    let labels: LabelSet = {};
    for (const labeler of this.labelers) {
      const more = labeler.label(sample);
      if (more) labels = { ...labels, ...more };
    }
    return labels;
  };
}

/** The process-wide hub (the profiler it drives is process-wide too). */
export const timeProfilerHub = new TimeProfilerHub();
