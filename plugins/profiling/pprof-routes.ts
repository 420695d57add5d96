import { RouterError } from '../../src/index.js';
import { captureBlockProfile, captureCpuProfile } from './captures.js';
import { goroutineFullText, goroutineProfile } from './goroutine-profile.js';
import { HEAP_SAMPLING_INTERVAL_BYTES, takeHeapProfile } from './heap-sampler.js';
import { renderIndexPage } from './index-page.js';
import { encodeProfile, type ProfileData } from './profile-builder.js';
import { renderProfileText } from './profile-text.js';
import { readDebug, readSeconds, refuseSeconds } from './query-params.js';
import { takeRuntimeSnapshot } from './runtime-snapshot.js';
import { threadcreateProfile } from './threadcreate-profile.js';

/** What a route answers with. */
export interface RouteAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/** One request to a route. */
export interface RouteRequest {
  readonly params: URLSearchParams;
  /** Aborted when the client goes away or the listener closes. */
  readonly signal: AbortSignal;
}

/** A profiling endpoint. */
export type Route = (request: RouteRequest) => Promise<RouteAnswer>;

const TEXT = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' };

function text(body: string): RouteAnswer {
  return { status: 200, headers: TEXT, body };
}

async function pprof(profile: ProfileData, name: string): Promise<RouteAnswer> {
  const headers = {
    'content-type': 'application/octet-stream',
    'content-disposition': `attachment; filename="${name}"`,
    'x-content-type-options': 'nosniff',
  };
  return { status: 200, headers, body: await encodeProfile(profile) };
}

/** Lets one capture of a kind run at a time; a second is refused with 409. */
class CaptureSlot {
  private running = false;

  constructor(private readonly kind: string) {}

  async run<T>(capture: () => Promise<T>): Promise<T> {
    if (this.running) {
      const message = `a ${this.kind} capture is already running; wait for it to finish`;
      throw new RouterError('PROFILING_CAPTURE_BUSY', message, { status: 409, plugin: 'profiling' });
    }
    this.running = true;
    try {
      return await capture();
    } finally {
      this.running = false;
    }
  }
}

function memoryFooter(): string[] {
  const usage = process.memoryUsage();
  return ['# process.memoryUsage()', ...Object.entries(usage).map(([key, value]) => `# ${key} = ${value}`)];
}

/** The routes under `/debug/pprof/`, by the path's last segment (`''` is the index). */
export function createRoutes(): ReadonlyMap<string, Route> {
  const cpuSlot = new CaptureSlot('CPU');
  const blockSlot = new CaptureSlot('block');
  return new Map<string, Route>([
    ['', async () => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: renderIndexPage() })],
    [
      'heap',
      async ({ params }) => {
        refuseSeconds(params, '/debug/pprof/heap');
        const debug = readDebug(params, 1);
        const profile = takeHeapProfile();
        if (debug === 0) return pprof(profile, 'heap');
        return text(renderProfileText(profile, `heap profile (sampled every ${HEAP_SAMPLING_INTERVAL_BYTES} bytes)`, memoryFooter()));
      },
    ],
    [
      'profile',
      async ({ params, signal }) => {
        const seconds = readSeconds(params);
        readDebug(params, 0);
        return pprof(await cpuSlot.run(() => captureCpuProfile(seconds, signal)), 'profile');
      },
    ],
    [
      'block',
      async ({ params, signal }) => {
        const seconds = readSeconds(params);
        const debug = readDebug(params, 1);
        const profile = await blockSlot.run(() => captureBlockProfile(seconds, signal));
        return debug === 0 ? pprof(profile, 'block') : text(renderProfileText(profile, 'block profile (event loop)'));
      },
    ],
    [
      'goroutine',
      async ({ params }) => {
        refuseSeconds(params, '/debug/pprof/goroutine');
        const debug = readDebug(params, 2);
        const snapshot = takeRuntimeSnapshot();
        if (debug === 2) return text(goroutineFullText(snapshot));
        const profile = goroutineProfile(snapshot, Date.now());
        return debug === 0 ? pprof(profile, 'goroutine') : text(renderProfileText(profile, 'goroutine profile (threads and event loop resources)'));
      },
    ],
    [
      'threadcreate',
      async ({ params }) => {
        refuseSeconds(params, '/debug/pprof/threadcreate');
        const debug = readDebug(params, 1);
        const profile = threadcreateProfile(takeRuntimeSnapshot(), Date.now());
        return debug === 0 ? pprof(profile, 'threadcreate') : text(renderProfileText(profile, 'threadcreate profile'));
      },
    ],
  ]);
}
