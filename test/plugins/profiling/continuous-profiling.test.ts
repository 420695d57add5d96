import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEMO_QUERY,
  decodePprof,
  driveLoad,
  readSamples,
  sampleTypesOf,
  startIngestServer,
  startProfilingRouter,
  totalFor,
  waitFor,
  type IngestPush,
  type IngestServer,
  type ProfilingRouter,
} from './helpers.js';
import { timeProfilerHub } from '../../../plugins/profiling/time-profiler-hub.js';

const version = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Continuous CPU profiles: wall-time samples (per-sample CPU time only while a capture needs it). */
const CPU_TYPES = ['samples/count', 'wall/nanoseconds'];
/** On-demand captures add each sample's CPU time. */
const CAPTURE_TYPES = ['samples/count', 'wall/nanoseconds', 'cpu/nanoseconds'];
const HEAP_TYPES = ['inuse_objects/count', 'inuse_space/bytes'];

const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((resource) => resource.close()));
});

async function ingest(): Promise<IngestServer> {
  const server = await startIngestServer();
  open.push(server);
  return server;
}

async function router(options: Parameters<typeof startProfilingRouter>[0]): Promise<ProfilingRouter> {
  const app = await startProfilingRouter(options);
  open.unshift(app);
  return app;
}

// Called once, so V8 does not inline it into a caller and the profiles name it.
function blockEventLoopWhilePushing(ms: number): number {
  const end = Date.now() + ms;
  let spins = 0;
  while (Date.now() < end) spins++;
  return spins;
}

const isCpu = (push: IngestPush) => sampleTypesOf(push.profile).join() === CPU_TYPES.join();
const isHeap = (push: IngestPush) => sampleTypesOf(push.profile).join() === HEAP_TYPES.join();

describe('continuous profiling (profiler.enabled)', () => {
  it('pushes CPU and heap profiles to /ingest with the application name, tags, interval and basic auth', async () => {
    const server = await ingest();
    const app = await router({
      enabled: true,
      server_address: server.url,
      basic_auth: { username: 'tenant-7', password: 'glc_s3cret-token' },
      tags: { team: 'api', region: 'eu' },
      application_name: 'test.router',
      upload_interval: '500ms',
    });
    await driveLoad(app.router, new Promise((resolve) => setTimeout(resolve, 1200)));
    await waitFor(() => server.pushes.filter(isCpu).length >= 2 && server.pushes.some(isHeap), 5000, 'CPU and heap pushes');

    for (const push of server.pushes) {
      expect(push.method).toBe('POST');
      expect(push.path).toBe('/ingest');
      expect(push.authorization).toBe(`Basic ${Buffer.from('tenant-7:glc_s3cret-token').toString('base64')}`);
      expect(push.partNames).toEqual(['profile']);
      expect(push.fileName).toBe('profile.pprof');
      expect(push.query.get('name')).toBe(`test.router{hostname=${hostname()},region=eu,team=api,version=${version}}`);
      expect(push.query.get('spyName')).toBe('nodespy');
      const from = Number(push.query.get('from'));
      const until = Number(push.query.get('until'));
      expect(Number.isInteger(from) && Number.isInteger(until)).toBe(true);
      expect(until).toBeGreaterThan(from);
      expect(until - from).toBeLessThanOrEqual(2);
      expect(Math.abs(until - push.receivedAt / 1000)).toBeLessThan(3);
      expect(isCpu(push) || isHeap(push)).toBe(true);
    }
    const cpu = server.pushes.filter(isCpu);
    for (const push of cpu) expect([...push.query.keys()].sort()).toEqual(['from', 'name', 'sampleRate', 'spyName', 'until']);
    expect(cpu[0]?.query.get('sampleRate')).toBe('100');
    const heap = server.pushes.find(isHeap);
    expect([...(heap?.query.keys() ?? [])].sort()).toEqual(['from', 'name', 'spyName', 'until']);
    // Consecutive CPU pushes cover consecutive intervals.
    expect(Number(cpu[1]?.query.get('from'))).toBeGreaterThanOrEqual(Number(cpu[0]?.query.get('from')));
    // The load was profiled: some CPU push holds the router's own code.
    const files = cpu.flatMap((push) => readSamples(push.profile).flatMap((sample) => sample.files));
    expect(files.some((file) => file.includes('/src/kernel/'))).toBe(true);

    const enabled = app.logs.find((line) => line.msg === 'Continuous profiling enabled');
    expect(enabled).toEqual({
      level: 'info',
      time: expect.any(Number),
      plugin: 'profiling',
      msg: 'Continuous profiling enabled',
      server_address: `${server.url}/`,
      application_name: 'test.router',
      upload_interval: '500ms',
      tags: { team: 'api', region: 'eu', hostname: hostname(), version },
      basic_auth: true,
    });
    expect(JSON.stringify(app.logs)).not.toContain('s3cret');
  });

  it('uses io.switchyard.router as the application name and appends /ingest to a server address with a path', async () => {
    const server = await ingest();
    await router({ enabled: true, server_address: `${server.url}/pyroscope/`, upload_interval: '300ms' });
    await waitFor(() => server.pushes.length >= 1, 5000, 'a push');
    const push = server.pushes[0];
    expect(push?.path).toBe('/pyroscope/ingest');
    expect(push?.authorization).toBeUndefined();
    expect(push?.query.get('name')).toBe(`io.switchyard.router{hostname=${hostname()},version=${version}}`);
  });

  it('keeps serving while the profile server is down, then resumes pushing when it is back', async () => {
    const server = await ingest();
    const app = await router({ enabled: true, server_address: server.url, upload_interval: '300ms' });
    await waitFor(() => server.pushes.length >= 2, 5000, 'the first pushes');

    await server.stop();
    const downSince = Date.now();
    const answered = await driveLoad(app.router, new Promise((resolve) => setTimeout(resolve, 1000)));
    expect(answered).toBeGreaterThan(10);
    const failed = app.logs.find((line) => line.msg === 'Profile push failed; retrying');
    expect(failed).toMatchObject({ level: 'warn', plugin: 'profiling', code: 'PROFILE_PUSH_FAILED', failures: 1, retry_in_ms: expect.any(Number) });
    expect(String(failed?.reason)).toMatch(/ECONNREFUSED/);
    // Sampled: one warning for the outage, not one per attempt.
    expect(app.logs.filter((line) => line.msg === 'Profile push failed; retrying')).toHaveLength(1);

    await server.restart();
    const backAt = Date.now();
    await waitFor(() => server.pushes.some((push) => push.receivedAt >= backAt && isCpu(push)), 5000, 'pushes after the server came back');
    await waitFor(() => app.logs.some((line) => line.msg === 'Profile push recovered'), 5000, 'the recovery log line');
    const recovered = app.logs.find((line) => line.msg === 'Profile push recovered');
    expect(recovered).toMatchObject({ level: 'info', plugin: 'profiling', failures: expect.any(Number), dropped: expect.any(Number) });
    // Profiles of the outage were kept and delivered late.
    expect(server.pushes.some((push) => Number(push.query.get('until')) * 1000 >= downSince && push.receivedAt >= backAt)).toBe(true);
  });

  it('retries while the profile server answers 503, and keeps at most 8 profiles waiting', async () => {
    const server = await ingest();
    const app = await router({ enabled: true, server_address: server.url, upload_interval: '200ms' });
    await waitFor(() => server.pushes.length >= 1, 5000, 'the first push');
    server.respondWith(503);
    const downAt = Date.now();
    // 15 intervals at 2 profiles each: more than the queue holds.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const failed = app.logs.find((line) => line.msg === 'Profile push failed; retrying');
    expect(failed).toMatchObject({ code: 'PROFILE_PUSH_FAILED', status: 503, reason: 'HTTP 503: try again later' });
    expect(app.logs.find((line) => line.msg === 'Profile push queue full; dropping the oldest profile')).toMatchObject({
      level: 'warn',
      code: 'PROFILE_PUSH_FAILED',
      dropped: expect.any(Number),
    });
    const before = server.pushes.length;
    server.respondWith(200);
    const backAt = Date.now();
    await waitFor(() => app.logs.some((line) => line.msg === 'Profile push recovered'), 5000, 'the recovery log line');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // About 15 CPU profiles were collected during the outage; at most 8 profiles wait (CPU and heap
    // alternate) plus the one being retried, the newest kept. Each CPU profile starts where its interval did.
    const startedInOutage = (push: IngestPush) => {
      const startMs = Number(push.profile.timeNanos) / 1e6;
      return startMs >= downAt && startMs < backAt;
    };
    expect(server.pushes.slice(before).filter((push) => isCpu(push) && startedInOutage(push)).length).toBeLessThanOrEqual(5);
    expect(server.pushes.slice(before).filter(isCpu).length).toBeGreaterThan(0);
  });

  it('drops a profile the server rejects with 401 instead of retrying it', async () => {
    const server = await ingest();
    server.respondWith(401);
    const app = await router({ enabled: true, server_address: server.url, upload_interval: '200ms', basic_auth: { username: 'u', password: 'wrong-password' } });
    await waitFor(() => app.logs.some((line) => line.msg === 'Profile push rejected by the profile server; profile dropped'), 5000, 'the rejection');
    expect(app.logs.find((line) => line.msg === 'Profile push rejected by the profile server; profile dropped')).toMatchObject({
      level: 'warn',
      code: 'PROFILE_PUSH_FAILED',
      status: 401,
      reason: 'HTTP 401: try again later',
    });
    expect(app.logs.some((line) => line.msg === 'Profile push failed; retrying')).toBe(false);
    expect(JSON.stringify(app.logs)).not.toContain('wrong-password');
  });

  it('runs together with on-demand captures on PPROF_ADDR: both get their profiles', async () => {
    const server = await ingest();
    const app = await router({ enabled: true, server_address: server.url, upload_interval: '300ms', pprof_addr: '127.0.0.1:0' });
    await waitFor(() => server.pushes.some(isCpu), 5000, 'a first push');
    expect(timeProfilerHub.samplingMode).toBe('plain');
    const pushesBefore = server.pushes.filter(isCpu).length;
    const capture = fetch(`${app.pprofUrl}/debug/pprof/profile?seconds=2`);
    const modes = new Set<string | undefined>();
    const watch = setInterval(() => modes.add(timeProfilerHub.samplingMode), 50);
    await driveLoad(app.router, capture);
    clearInterval(watch);
    const response = await capture;
    expect(response.status).toBe(200);
    const profile = decodePprof(await response.arrayBuffer());
    // The capture switched the shared profiler to per-sample CPU time, and back when it ended.
    expect(modes.has('detailed')).toBe(true);
    expect(timeProfilerHub.samplingMode).toBe('plain');
    expect(sampleTypesOf(profile)).toEqual(CAPTURE_TYPES);
    const cpuNanos = readSamples(profile).reduce((sum, sample) => sum + (sample.values[2] ?? 0), 0);
    expect(cpuNanos).toBeGreaterThan(100_000_000);
    expect(Number(profile.durationNanos)).toBeGreaterThanOrEqual(1_900_000_000);
    expect(readSamples(profile).some((sample) => sample.files.some((file) => file.includes('/src/kernel/')))).toBe(true);
    // Pushes went on during the capture, each covering its own interval, in their own sample types.
    expect(server.pushes.filter(isCpu).length - pushesBefore).toBeGreaterThanOrEqual(3);
    expect(server.pushes.every((push) => isCpu(push) || isHeap(push))).toBe(true);
    const answer = await app.router.query(DEMO_QUERY);
    expect(answer.status).toBe(200);
  });

  it('finds what blocked the event loop in a block capture taken between pushes, and the pushes keep coming without its label', async () => {
    const server = await ingest();
    // Pushes every 100 ms: cuts for continuous profiling land next to the block, before the capture's own heartbeat notices it.
    const app = await router({ enabled: true, server_address: server.url, upload_interval: '100ms', pprof_addr: '127.0.0.1:0' });
    await waitFor(() => server.pushes.some(isCpu), 5000, 'a first push');
    expect(timeProfilerHub.samplingMode).toBe('plain');
    const pushesBefore = server.pushes.filter(isCpu).length;
    const capture = fetch(`${app.pprofUrl}/debug/pprof/block?seconds=2`);
    await waitFor(() => timeProfilerHub.samplingMode === 'detailed', 2000, 'the block capture to switch the sampler');
    await new Promise((resolve) => setTimeout(resolve, 250));
    blockEventLoopWhilePushing(400);
    const response = await capture;
    expect(response.status).toBe(200);
    expect(timeProfilerHub.samplingMode).toBe('plain');

    const block = decodePprof(await response.arrayBuffer());
    expect(sampleTypesOf(block)).toEqual(['samples/count', 'delay/nanoseconds']);
    expect(totalFor(block, 1, 'blockEventLoopWhilePushing')).toBeGreaterThanOrEqual(250_000_000);
    expect(readSamples(block).every((sample) => Object.keys(sample.labels).length === 0)).toBe(true);

    // Continuous profiling went on through the capture and saw the same block, in its own sample types and unlabelled.
    await waitFor(() => server.pushes.some((push) => isCpu(push) && totalFor(push.profile, 1, 'blockEventLoopWhilePushing') > 0), 3000, 'the push with the block');
    expect(server.pushes.filter(isCpu).length - pushesBefore).toBeGreaterThanOrEqual(5);
    expect(server.pushes.every((push) => isCpu(push) || isHeap(push))).toBe(true);
    const pushed = server.pushes.filter(isCpu).flatMap((push) => readSamples(push.profile));
    expect(pushed.every((sample) => Object.keys(sample.labels).length === 0)).toBe(true);
    expect(pushed.reduce((sum, sample) => sum + (sample.frames.includes('blockEventLoopWhilePushing') ? (sample.values[1] ?? 0) : 0), 0)).toBeGreaterThanOrEqual(250_000_000);
  });
});
