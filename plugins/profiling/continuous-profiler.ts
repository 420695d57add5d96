import { hostname } from 'node:os';
import { formatDuration, type Logger } from '../../src/index.js';
import { cpuProfileOf } from './captures.js';
import { acquireHeapSampler, takeHeapProfile } from './heap-sampler.js';
import { pushProfile, type IngestTarget } from './ingest-client.js';
import type { ProfilerSection } from './options.js';
import { encodeProfile } from './profile-builder.js';
import { routerVersion } from './router-version.js';
import { SAMPLE_RATE_HZ, timeProfilerHub, type TimeSession } from './time-profiler-hub.js';
import { UploadQueue } from './upload-queue.js';

/** Continuous profiling, running. */
export interface ContinuousProfiler {
  /** Stops sampling and pushing; profiles not yet pushed are dropped. */
  stop(): void;
}

/** Longest wait between retries, in upload intervals. */
const MAX_BACKOFF_INTERVALS = 4;

/** The tags every push carries: the user's, plus `hostname` and `version`. */
export function pushTags(section: ProfilerSection): Record<string, string> {
  return { ...section.tags, hostname: hostname(), version: routerVersion() };
}

function basicAuthorization({ username, password }: ProfilerSection['basic_auth']): string | undefined {
  if (username === undefined || password === undefined) return undefined;
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/**
 * Every `upload_interval`, cuts the CPU profile of the interval from the
 * shared time profiler and takes a heap snapshot, and queues both for the
 * profile server. Sampling and pushing never wait on each other: a slow or
 * absent server only fills the bounded queue.
 */
export function startContinuousProfiler(section: ProfilerSection & { server_address: string }, log: Logger): ContinuousProfiler {
  const version = routerVersion();
  const target: IngestTarget = {
    serverAddress: section.server_address,
    applicationName: section.application_name,
    tags: pushTags(section),
    authorization: basicAuthorization(section.basic_auth),
    userAgent: `switchyard/${version}`,
  };
  const queue = new UploadQueue({
    send: (upload, signal) => pushProfile(target, upload, signal),
    log,
    baseDelayMs: section.upload_interval,
    maxDelayMs: Math.min(section.upload_interval * MAX_BACKOFF_INTERVALS, 5 * 60_000),
  });
  // The time profiler first: it is the one that can refuse (another library owns it).
  const session: TimeSession = timeProfilerHub.open();
  const releaseHeap = acquireHeapSampler();
  let stopped = false;

  async function collectInterval(): Promise<void> {
    const window = session.take();
    const heap = takeHeapProfile();
    const [cpuBody, heapBody] = await Promise.all([encodeProfile(cpuProfileOf(window, false)), encodeProfile(heap)]);
    if (stopped) return;
    queue.push({ kind: 'cpu', body: cpuBody, fromMs: window.startMs, untilMs: window.endMs, sampleRate: SAMPLE_RATE_HZ });
    queue.push({ kind: 'heap', body: heapBody, fromMs: window.startMs, untilMs: window.endMs });
  }

  const timer = setInterval(() => {
    collectInterval().catch((error: unknown) => log.warn({ err: error, code: 'PROFILE_PUSH_FAILED' }, 'Profile collection failed'));
  }, section.upload_interval);
  timer.unref();

  const address = new URL(section.server_address);
  log.info(
    {
      server_address: `${address.origin}${address.pathname}`,
      application_name: section.application_name,
      upload_interval: formatDuration(section.upload_interval),
      tags: target.tags,
      basic_auth: target.authorization !== undefined,
    },
    'Continuous profiling enabled',
  );

  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      queue.stop();
      session.close();
      releaseHeap();
    },
  };
}
