import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseListenAddress } from '../../../src/index.js';
import { exposureWarning } from '../../../plugins/profiling/pprof-server.js';
import { decodePprof, driveLoad, readSamples, sampleTypesOf, startProfilingRouter, totalFor, type ProfilingRouter } from './helpers.js';

let app: ProfilingRouter;
let base: string;

beforeAll(async () => {
  app = await startProfilingRouter({ pprof_addr: '127.0.0.1:0' });
  if (app.pprofUrl === undefined) throw new Error('the profiling listener did not log its address');
  base = `${app.pprofUrl}/debug/pprof`;
});

afterAll(async () => {
  await app?.close();
});

async function get(path: string): Promise<Response> {
  return fetch(`${base}${path}`);
}

async function errorOf(response: Response): Promise<{ status: number; code: unknown; message: unknown }> {
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = (await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
  expect(body.errors).toHaveLength(1);
  return { status: response.status, code: body.errors[0]?.extensions.code, message: body.errors[0]?.message };
}

function expectPprofHeaders(response: Response, name: string): void {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/octet-stream');
  expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${name}"`);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('x-switchyard-pid')).toBe(String(process.pid));
}

/** Keeps objects reachable so the heap profile has something of ours to show. */
const retained: unknown[] = [];

function retainLotsOfObjects(): void {
  for (let i = 0; i < 200_000; i++) retained.push({ index: i, label: `object-${i}`, values: [i, i + 1, i + 2] });
}

// Two functions, each called once: V8 may inline a function it has already optimized into its caller, and the profiler then names the caller.
function blockEventLoopFor(ms: number): number {
  const end = Date.now() + ms;
  let spins = 0;
  while (Date.now() < end) spins++;
  return spins;
}

function blockEventLoopAgainFor(ms: number): number {
  const end = Date.now() + ms;
  let spins = 0;
  while (Date.now() < end) spins++;
  return spins;
}

/** A worker thread stuck in a named function, so its stack is known. */
function startSpinningWorker(): Worker {
  const source = `
    const { parentPort } = require('node:worker_threads');
    function spinInWorker() { let x = 0; for (let i = 0; i < 1e6; i++) x += i; return x; }
    parentPort.postMessage('started');
    for (;;) spinInWorker();
  `;
  return new Worker(source, { eval: true });
}

async function withSpinningWorker<T>(run: () => Promise<T>): Promise<T> {
  const worker = startSpinningWorker();
  try {
    await new Promise((resolve) => worker.once('message', resolve));
    return await run();
  } finally {
    await worker.terminate();
  }
}

describe('the profiling listener (PPROF_ADDR)', () => {
  it('warns at startup that the profiling endpoints are exposed, bound to loopback', () => {
    const warning = app.logs.find((line) => line.msg.startsWith('Profiling endpoints exposed'));
    expect(warning).toMatchObject({
      level: 'warn',
      plugin: 'profiling',
      msg: 'Profiling endpoints exposed on loopback; do not enable PPROF_ADDR in production',
    });
    expect(warning?.listen_addr).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it("serves a CPU profile, taken while the router serves load, that shows the router's own functions", async () => {
    const capture = get('/profile?seconds=1');
    const answered = await driveLoad(app.router, capture);
    const response = await capture;
    expectPprofHeaders(response, 'profile');
    const profile = decodePprof(await response.arrayBuffer());
    expect(answered).toBeGreaterThan(10);
    expect(sampleTypesOf(profile)).toEqual(['samples/count', 'wall/nanoseconds', 'cpu/nanoseconds']);
    expect(Number(profile.durationNanos)).toBeGreaterThanOrEqual(900_000_000);
    expect(Number(profile.durationNanos)).toBeLessThan(3_000_000_000);
    const samples = readSamples(profile);
    const kernelFrames = new Set(samples.flatMap((sample) => sample.frames.filter((_, index) => sample.files[index]?.includes('/src/kernel/'))));
    // Which pipeline functions a 1 s sample catches varies; several of them always show.
    const pipeline = ['executeFederated', 'executePlan', 'runStage', 'runFetch', 'runRootFetch', 'runEntityFetch', 'sendToSubgraph', 'shape', 'handle'];
    expect(pipeline.filter((name) => kernelFrames.has(name)).length).toBeGreaterThanOrEqual(3);
    const cpu = samples.reduce((sum, sample) => sum + (sample.values[2] ?? 0), 0);
    expect(cpu).toBeGreaterThan(50_000_000);
  });

  it('refuses a second CPU capture while one runs with 409, and takes the first to the end', async () => {
    const first = get('/profile?seconds=1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await get('/profile?seconds=1');
    expect(await errorOf(second)).toEqual({
      status: 409,
      code: 'PROFILING_CAPTURE_BUSY',
      message: 'a CPU capture is already running; wait for it to finish',
    });
    const done = await first;
    expectPprofHeaders(done, 'profile');
    decodePprof(await done.arrayBuffer());
    const after = await get('/profile?seconds=1');
    expectPprofHeaders(after, 'profile');
    await after.arrayBuffer();
  });

  it.each(['0', '301', 'abc', '-1', '1.5', ''])('answers 400 to seconds=%j on the CPU and block profiles', async (seconds) => {
    for (const path of ['profile', 'block']) {
      const response = await get(`/${path}?seconds=${seconds}`);
      expect(await errorOf(response)).toEqual({
        status: 400,
        code: 'PROFILING_BAD_PARAMETER',
        message: `seconds must be a whole number from 1 to 300, got ${JSON.stringify(seconds)}`,
      });
    }
  });

  it('serves the heap profile with the live objects of a function that keeps them', async () => {
    retainLotsOfObjects();
    const response = await get('/heap');
    expectPprofHeaders(response, 'heap');
    const profile = decodePprof(await response.arrayBuffer());
    expect(sampleTypesOf(profile)).toEqual(['inuse_objects/count', 'inuse_space/bytes']);
    expect(totalFor(profile, 1, 'retainLotsOfObjects')).toBeGreaterThan(2_000_000);

    const text = await get('/heap?debug=1');
    expect(text.status).toBe(200);
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const body = await text.text();
    expect(body).toMatch(/^heap profile \(sampled every 524288 bytes\): total \d+\n# values: inuse_objects\/count inuse_space\/bytes\n/);
    expect(body).toMatch(/#\tretainLotsOfObjects\t.*pprof-endpoints\.test\.ts:\d+/);
    expect(body).toMatch(/# heapUsed = \d+/);
    retained.length = 0;
  });

  it("serves the goroutine profile as thread stacks plus the event loop's active handles and requests", async () => {
    await withSpinningWorker(async () => {
      const response = await get('/goroutine');
      expectPprofHeaders(response, 'goroutine');
      const profile = decodePprof(await response.arrayBuffer());
      expect(sampleTypesOf(profile)).toEqual(['goroutine/count']);
      const samples = readSamples(profile);
      const main = samples.find((sample) => sample.labels.thread === 'main');
      expect(main).toMatchObject({ values: [1], labels: { kind: 'thread', thread: 'main', thread_id: 0 } });
      expect(main?.frames).toContain('takeRuntimeSnapshot');
      const worker = samples.find((sample) => sample.labels.thread === 'worker');
      expect(worker).toMatchObject({ values: [1], labels: { kind: 'thread', thread: 'worker' } });
      expect(worker?.frames).toContain('spinInWorker');
      const servers = samples.find((sample) => sample.labels.resource === 'TCPServerWrap');
      // The profiling listener and the four demo subgraphs listen in this process.
      expect(servers?.values[0]).toBeGreaterThanOrEqual(5);
      expect(servers?.frames).toEqual(['TCPServerWrap', '(event loop of the main thread)']);

      const full = await (await get('/goroutine?debug=2')).text();
      expect(full).toMatch(/^thread 0 \[main, running JavaScript\]:\n/);
      expect(full).toMatch(/\nthread \d+ \[worker, running JavaScript\]:\nspinInWorker\n\t\[worker eval\]:\d+\n/);
      expect(full).toMatch(/\n\(event loop of the main thread\) \[\d+ active handles and requests\]:\n(\t\w+ x\d+\n)*\tTCPServerWrap x\d+\n/);

      const summary = await (await get('/goroutine?debug=1')).text();
      expect(summary).toMatch(/^goroutine profile \(threads and event loop resources\): total \d+\n# values: goroutine\/count\n/);
      expect(summary).toContain('@ kind=resource resource=TCPServerWrap\n#\tTCPServerWrap\n#\t(event loop of the main thread)\n');
    });
  });

  it('serves the threadcreate profile: the main thread, worker threads and native threads', async () => {
    await withSpinningWorker(async () => {
      const response = await get('/threadcreate');
      expectPprofHeaders(response, 'threadcreate');
      const profile = decodePprof(await response.arrayBuffer());
      expect(sampleTypesOf(profile)).toEqual(['threadcreate/count']);
      const samples = readSamples(profile);
      expect(samples.find((sample) => sample.labels.kind === 'main')).toEqual({
        values: [1],
        frames: ['(main JavaScript thread)'],
        files: [''],
        labels: { kind: 'main', thread_id: 0 },
      });
      expect(samples.filter((sample) => sample.labels.kind === 'worker').map((sample) => sample.frames)).toEqual([['(worker_threads Worker)']]);
      const native = samples.find((sample) => sample.labels.kind === 'native');
      expect(native?.values[0]).toBeGreaterThanOrEqual(4);

      const text = await (await get('/threadcreate?debug=1')).text();
      expect(text).toMatch(/^threadcreate profile: total \d+\n# values: threadcreate\/count\n/);
      expect(text).toContain('1 @ kind=main thread_id=0\n#\t(main JavaScript thread)\n');
    });
  });

  it('serves the block profile: the function that kept the event loop from running due timers', async () => {
    const capture = get('/block?seconds=1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    blockEventLoopFor(300);
    const response = await capture;
    expectPprofHeaders(response, 'block');
    const profile = decodePprof(await response.arrayBuffer());
    expect(sampleTypesOf(profile)).toEqual(['samples/count', 'delay/nanoseconds']);
    expect(totalFor(profile, 1, 'blockEventLoopFor')).toBeGreaterThanOrEqual(200_000_000);
    expect(readSamples(profile).every((sample) => Object.keys(sample.labels).length === 0)).toBe(true);

    const textCapture = get('/block?seconds=1&debug=1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    blockEventLoopAgainFor(150);
    const text = await (await textCapture).text();
    expect(text).toMatch(/^block profile \(event loop\): total \d+\n# values: samples\/count delay\/nanoseconds\n/);
    expect(text).toMatch(/#\tblockEventLoopAgainFor\t.*pprof-endpoints\.test\.ts:\d+/);
  });

  it('runs a CPU capture and a block capture at the same time', async () => {
    const [cpu, block] = await Promise.all([get('/profile?seconds=1'), get('/block?seconds=1')]);
    expectPprofHeaders(cpu, 'profile');
    expectPprofHeaders(block, 'block');
    decodePprof(await cpu.arrayBuffer());
    decodePprof(await block.arrayBuffer());
  });

  it('lists every profile on the index page', async () => {
    for (const path of ['/', '']) {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await response.text();
      for (const name of ['block', 'goroutine', 'heap', 'profile', 'threadcreate']) expect(html).toContain(`<a href="${name}?debug=`);
    }
  });

  it('answers 404 for unknown paths and 405 for methods other than GET', async () => {
    for (const path of ['/debug/pprof/mutex', '/debug/pprof/heap/extra', '/metrics', '/']) {
      const response = await fetch(`${app.pprofUrl}${path}`);
      expect(await errorOf(response)).toEqual({ status: 404, code: 'PROFILING_NOT_FOUND', message: `no profile at ${path}; see GET /debug/pprof/` });
    }
    const post = await fetch(`${base}/heap`, { method: 'POST' });
    expect(post.headers.get('allow')).toBe('GET');
    expect(await errorOf(post)).toEqual({ status: 405, code: 'PROFILING_METHOD_NOT_ALLOWED', message: 'POST is not allowed; use GET' });
  });

  it('answers 400 to a debug level or a seconds parameter the path does not support', async () => {
    const cases: Array<[string, string]> = [
      ['/heap?debug=2', 'debug must be one of 0, 1 on this path, got "2"'],
      ['/threadcreate?debug=x', 'debug must be one of 0, 1 on this path, got "x"'],
      ['/goroutine?debug=3', 'debug must be one of 0, 1, 2 on this path, got "3"'],
      ['/profile?seconds=1&debug=1', 'debug must be 0 on this path (it has no text form), got "1"'],
      ['/heap?seconds=5', 'seconds is not accepted on /debug/pprof/heap: it answers at once (only /debug/pprof/profile and /debug/pprof/block capture over time)'],
    ];
    for (const [path, message] of cases) {
      expect(await errorOf(await get(path))).toEqual({ status: 400, code: 'PROFILING_BAD_PARAMETER', message });
    }
  });
});

describe('the startup warning about the profiling endpoints', () => {
  it.each([':6060', 'localhost:6060', '127.0.0.1:6060', '[::1]:6060'])('says %s is loopback only', (address) => {
    expect(exposureWarning(parseListenAddress(address).host)).toBe('Profiling endpoints exposed on loopback; do not enable PPROF_ADDR in production');
  });

  it.each(['0.0.0.0:6060', '[::]:6060', '10.1.2.3:6060', 'router.internal:6060'])('says %s is reachable beyond loopback', (address) => {
    expect(exposureWarning(parseListenAddress(address).host)).toBe(
      'Profiling endpoints exposed beyond loopback: anyone who can reach this address can read profiles of the router',
    );
  });
});
