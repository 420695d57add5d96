/**
 * Hostile connections against every listener of the router: the main
 * GraphQL listener, Connect (HTTP/1.1 and h2c), invalidation, metrics and
 * profiling. Each listener is started on 127.0.0.1:0 with short bounds so
 * slow attacks end in a second, and each attack is a raw socket; after
 * every attack a normal request must still be answered. The defaults are
 * checked separately, and the crash that started this (a reset before the
 * Connect listener saw 4 bytes) against the real CLI, alone and under
 * `--workers`.
 */
import { connect as connectHttp2, constants as http2Constants } from 'node:http2';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAIN_LISTENER_TIMEOUTS, SIDE_LISTENER_TIMEOUTS, type ListenerTimeouts } from '../../src/index.js';
import { composeSubgraphs } from '../../src/compose/index.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { freePort, spawnCli, waitFor } from '../cli/run-cli.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';
import { connectPost, serveProjects, type ServedProjects } from '../plugins/connect/fixtures.js';
import { captureLogs, startTargets, BIG_BYTES, type Target } from './support/listener-targets.js';
import { exchange, halfClose, open, readUntilClosed, resetAfter, resetMidAnswer, sleep, stopReading, trickle } from './support/socket-attacks.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

/** Short bounds, so slow attacks are cut within a second. */
const SHORT: ListenerTimeouts = { headersMs: 500, requestMs: 1_000, keepAliveMs: 500, stallMs: 500, checkIntervalMs: 50 };
/** How late past a bound a close may come on a busy machine. */
const SLACK_MS = 1_500;

/** Resolves with `promise`'s value, or undefined when it takes longer than `ms`. */
function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  return Promise.race([promise, sleep(ms).then(() => undefined)]);
}

/** Collects what would crash a router process (an unhandled 'error' event is one) while a test runs. */
function watchUncaught(): { errors: Error[]; stop(): void } {
  const errors: Error[] = [];
  const record = (error: Error) => void errors.push(error);
  process.on('uncaughtException', record);
  return { errors, stop: () => process.off('uncaughtException', record) };
}

async function stillServes(target: Target): Promise<void> {
  const answer = await exchange(target.port, target.request);
  expect(answer.status, `${target.name} answers a normal request`).toBe(target.okStatus);
}

describe('every listener, with short bounds', () => {
  let targets: Target[];
  const { logger, lines } = captureLogs();

  beforeAll(async () => {
    targets = await startTargets(SHORT, logger);
  });

  afterAll(async () => {
    await Promise.all((targets ?? []).map((target) => target.close()));
  });

  it('survives connections reset before any byte, after a few bytes, mid-headers, mid-body and while the answer is written, and half-closed ones', async () => {
    const crashes = watchUncaught();
    try {
      for (const target of targets) {
        const moments = [
          resetAfter(target.port, ''),
          resetAfter(target.port, 'GE'),
          resetAfter(target.port, 'P'),
          resetAfter(target.port, target.post.head.slice(0, 30)),
          resetAfter(target.port, target.post.head + target.post.bodyStart),
          resetMidAnswer(target.port, target.bigRequest ?? target.request),
        ];
        for (let i = 0; i < 5; i++) moments.push(resetAfter(target.port, '', 0), resetAfter(target.port, 'PR', 0));
        await Promise.all(moments);
        // Half-open: the client ends its side, with nothing sent, or mid-request. Closed at once, a cut request with 400.
        const nothing = await halfClose(target.port, '');
        const partial = await halfClose(target.port, target.post.head.slice(0, 30));
        expect(nothing.closed && partial.closed, target.name).toBe(true);
        expect(nothing.ms, target.name).toBeLessThan(SLACK_MS);
        expect([0, 400], target.name).toContain(partial.status);
        await sleep(50);
        await stillServes(target);
      }
    } finally {
      crashes.stop();
    }
    expect(crashes.errors.map((error) => error.message)).toEqual([]);
  });

  it('answers garbage where a request line should be with 400 and Connection: close, and logs it at debug', async () => {
    for (const target of targets) {
      for (const garbage of ['\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 hello\r\n\r\n', 'HELLO\r\n\r\n', 'GET / HTTP/9.9\r\nHost: x\r\n\r\n', 'GET /\0 HTTP/1.1\r\n\r\n']) {
        const answer = await exchange(target.port, garbage);
        expect({ listener: target.name, status: answer.status, closed: answer.closed }).toEqual({ listener: target.name, status: 400, closed: true });
        expect(answer.text.toLowerCase()).toContain('connection: close');
      }
      expect(
        lines.some((line) => line.msg === 'Bad request closed' && line.listener === target.name && line.level === 'debug'),
        target.name,
      ).toBe(true);
      await stillServes(target);
    }
  });

  it('closes a connection that sends nothing within the header bound', async () => {
    const idle = await Promise.all(targets.map(async (target) => ({ target, answer: await exchange(target.port, '', SHORT.headersMs + SLACK_MS + 1_000) })));
    for (const { target, answer } of idle) {
      expect(answer.closed, target.name).toBe(true);
      expect(answer.ms, target.name).toBeLessThan(Math.max(SHORT.headersMs, SHORT.stallMs) + SLACK_MS);
      await stillServes(target);
    }
  });

  it('cuts off headers trickled a byte at a time (slowloris) with 408 at the header bound, serving other clients meanwhile', async () => {
    const attacks = targets.map((target) => ({
      target,
      answer: trickle(target.port, target.post.head.slice(0, target.post.head.indexOf('\r\n') + 2), 'X-Slow: yes\r\n', 50, SHORT.headersMs + SLACK_MS + 1_000),
    }));
    await sleep(SHORT.headersMs / 2);
    // Mid-attack: everyone else is served.
    for (const target of targets) await stillServes(target);
    for (const { target, answer } of attacks) {
      const seen = await answer;
      expect({ listener: target.name, status: seen.status, closed: seen.closed }).toEqual({ listener: target.name, status: 408, closed: true });
      expect(seen.ms, target.name).toBeLessThan(SHORT.headersMs + SLACK_MS);
    }
  });

  it('cuts off a request body trickled a byte at a time at the request bound', async () => {
    const attacks = targets.map((target) => ({ target, answer: trickle(target.port, target.post.head + target.post.bodyStart, ' ', 50, SHORT.requestMs + SLACK_MS + 1_000) }));
    for (const { target, answer } of attacks) {
      const seen = await answer;
      expect(seen.closed, target.name).toBe(true);
      expect(seen.ms, target.name).toBeLessThan(SHORT.requestMs + SLACK_MS);
      // An answer may come before the body is read (405, 401...): what counts is that the connection goes.
      expect(seen.status === 0 || (seen.status >= 400 && seen.status < 500), `${target.name}: ${seen.status}`).toBe(true);
      await stillServes(target);
    }
  });

  it('closes a client that stops reading a large answer once stalled for the stall bound, but keeps a quiet one whose answer is being worked on', async () => {
    const withBigAnswers = targets.filter((target) => target.bigRequest !== undefined);
    expect(withBigAnswers.map((target) => target.name)).toEqual(['router', 'connect']);
    for (const target of withBigAnswers) {
      const seen = await stopReading(target.port, target.bigRequest!, SHORT.stallMs + SLACK_MS);
      expect(seen.closed, target.name).toBe(true);
      // The answer was cut short: the server did not keep it for a reader that never came back.
      expect(seen.bytes, target.name).toBeLessThan(BIG_BYTES);
      await stillServes(target);
    }
    // A CPU profile of 2 s: its connection is quiet for four stall bounds, and is answered.
    const pprof = targets.find((target) => target.name === 'profiling')!;
    const answer = await exchange(pprof.port, 'GET /debug/pprof/profile?seconds=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 10_000);
    expect(answer.status).toBe(200);
  });
});

describe('the Connect listener over HTTP/2 (h2c), with short bounds', () => {
  let connect: Target;

  beforeAll(async () => {
    const targets = await startTargets(SHORT);
    connect = targets.find((target) => target.name === 'connect')!;
    await Promise.all(targets.filter((target) => target !== connect).map((target) => target.close()));
  });

  afterAll(async () => {
    await connect?.close();
  });

  const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
  const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

  async function h2Get(path: string): Promise<number> {
    const client = connectHttp2(`http://127.0.0.1:${connect.port}`);
    client.on('error', () => undefined);
    try {
      return await new Promise<number>((resolve, reject) => {
        const stream = client.request({ ':path': path });
        stream.on('response', (headers) => resolve(Number(headers[':status'])));
        stream.on('error', reject);
        stream.resume();
        stream.end();
      });
    } finally {
      client.close();
    }
  }

  it('closes a connection with a garbage preface at once, and sends GOAWAY to a session that opens no stream within the header bound, even one trickling a header block', async () => {
    const garbage = await exchange(connect.port, 'PRI * HTTP/2.0\r\n\r\nXX\r\n\r\ngarbage garbage');
    expect(garbage.closed).toBe(true);
    expect(garbage.ms).toBeLessThan(SLACK_MS);
    await resetAfter(connect.port, PREFACE.slice(0, 10));
    await resetAfter(connect.port, PREFACE);
    const idle = exchange(connect.port, Buffer.concat([Buffer.from(PREFACE), EMPTY_SETTINGS]), SHORT.headersMs + SLACK_MS + 1_000);
    // A HEADERS frame announced as 16 KB, its bytes sent one at a time.
    const headersFrame = Buffer.concat([Buffer.from([0, 0x40, 0, 1, 0x4, 0, 0, 0, 1]), Buffer.alloc(64, 0x41)]);
    const socket = await open(connect.port);
    const trickled = readUntilClosed(socket, SHORT.headersMs + SLACK_MS + 1_000);
    socket.write(Buffer.concat([Buffer.from(PREFACE), EMPTY_SETTINGS]));
    let i = 0;
    const drip = setInterval(() => {
      if (!socket.destroyed && i < headersFrame.length) socket.write(headersFrame.subarray(i, ++i));
    }, 30);
    // Meanwhile, a well-behaved HTTP/2 client is served.
    expect(await h2Get('/ok')).toBe(200);
    const [idleSeen, trickledSeen] = await Promise.all([idle, trickled]);
    clearInterval(drip);
    for (const seen of [idleSeen, trickledSeen]) {
      expect(seen.closed).toBe(true);
      expect(seen.ms).toBeLessThan(SHORT.headersMs + SLACK_MS);
      // The last frame before the close is a GOAWAY (type 7).
      expect(seen.text.includes('\x07\x00\x00\x00\x00\x00')).toBe(true);
    }
  });

  it('closes an idle session after its streams are done, after the keep-alive bound', async () => {
    const client = connectHttp2(`http://127.0.0.1:${connect.port}`);
    client.on('error', () => undefined);
    const closed = within(SHORT.keepAliveMs + SLACK_MS + 1_000, new Promise<number>((resolve) => client.once('close', () => resolve(Date.now()))));
    await new Promise<void>((resolve) => {
      const stream = client.request({ ':path': '/ok' });
      stream.resume();
      stream.on('close', () => resolve());
      stream.end();
    });
    const done = Date.now();
    const at = await closed;
    client.destroy();
    expect(at, 'the server closed the idle session').toBeDefined();
    expect(at! - done).toBeLessThan(SHORT.keepAliveMs + SLACK_MS);
  });

  it('cancels a stream whose client stops reading a large answer, and serves the next client', async () => {
    const client = connectHttp2(`http://127.0.0.1:${connect.port}`);
    client.on('error', () => undefined);
    const stream = client.request({ ':path': '/big' });
    stream.on('error', () => undefined);
    stream.end();
    // Never read: the flow-control window fills and the rest of the answer waits in the server.
    const started = Date.now();
    const rstCode = await within(SHORT.stallMs + SLACK_MS + 1_000, new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? -1))));
    client.destroy();
    expect(rstCode).toBe(http2Constants.NGHTTP2_CANCEL);
    expect(Date.now() - started).toBeLessThan(SHORT.stallMs + SLACK_MS + 1_000);
    expect(await h2Get('/ok')).toBe(200);
    expect((await exchange(connect.port, 'GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(200);
  });

  it('cancels a stream whose request body is trickled past the request bound, but keeps a quiet call whose request is whole', async () => {
    const client = connectHttp2(`http://127.0.0.1:${connect.port}`);
    client.on('error', () => undefined);
    try {
      const trickled = client.request({ ':method': 'POST', ':path': '/ok' });
      trickled.on('error', () => undefined);
      trickled.resume();
      const drip = setInterval(() => {
        if (!trickled.closed) trickled.write(' ');
      }, 50);
      const started = Date.now();
      const rstCode = await within(SHORT.requestMs + SLACK_MS + 1_000, new Promise<number>((resolve) => trickled.once('close', () => resolve(trickled.rstCode ?? -1))));
      clearInterval(drip);
      expect(rstCode).toBe(http2Constants.NGHTTP2_CANCEL);
      expect(Date.now() - started).toBeLessThan(SHORT.requestMs + SLACK_MS);
      // Quiet for four stall bounds while its answer is worked on: answered.
      const slow = client.request({ ':path': '/slow' });
      slow.resume();
      const status = await new Promise<number>((resolve) => {
        slow.on('response', (headers) => resolve(Number(headers[':status'])));
        slow.on('close', () => resolve(-slow.rstCode!));
      });
      expect(status).toBe(200);
    } finally {
      client.destroy();
    }
  });
});

describe('default bounds', () => {
  it('bounds every listener by default: headers within 10 s, a request within 60 s, idle and stalled connections within 65 s', async () => {
    const { logger, lines } = captureLogs();
    const targets = await startTargets(undefined, logger);
    await Promise.all(targets.map((target) => target.close()));
    const bounds = new Map(lines.filter((line) => line.msg === 'Listener bounds').map((line) => [line.listener as string, line.timeouts as ListenerTimeouts]));
    expect([...bounds.keys()].sort()).toEqual(['connect', 'invalidation', 'metrics', 'profiling', 'router']);
    expect(bounds.get('router')).toEqual(MAIN_LISTENER_TIMEOUTS);
    for (const name of ['connect', 'invalidation', 'metrics', 'profiling']) expect(bounds.get(name), name).toEqual(SIDE_LISTENER_TIMEOUTS);
    for (const [name, timeouts] of bounds) {
      expect(timeouts.headersMs, name).toBeLessThanOrEqual(10_000);
      expect(timeouts.requestMs, name).toBeLessThanOrEqual(60_000);
      expect(timeouts.keepAliveMs, name).toBeLessThanOrEqual(65_000);
      expect(timeouts.stallMs, name).toBeLessThanOrEqual(60_000);
      expect(timeouts.checkIntervalMs, name).toBeLessThanOrEqual(1_000);
    }
    // The main listener keeps its keep-alive above the 60 s idle timeout of common load balancers.
    expect(MAIN_LISTENER_TIMEOUTS.keepAliveMs).toBe(65_000);
  });

  it('runs the main listener of a real router with the default bounds', async () => {
    const library = await startSubgraph(librarySubgraph());
    const { logger, lines } = captureLogs();
    const router = await startTestRouter({ subgraphs: [library], listen: true, logger });
    try {
      expect(lines.find((line) => line.msg === 'Listener bounds' && line.listener === 'router')?.timeouts).toEqual(MAIN_LISTENER_TIMEOUTS);
    } finally {
      await router.close();
      await library.close();
    }
  });
});

describe('Connect-Timeout-Ms and Grpc-Timeout', () => {
  let setup: ServedProjects;
  const GET_PROJECT = '/projects.v1.ProjectsService/GetProject';

  beforeAll(async () => {
    setup = await serveProjects();
  });

  afterAll(async () => {
    await setup?.close();
  });

  it('runs the call when the timeout is 2^31 ms or more, up to 10 digits (capped to the longest timer Node keeps)', async () => {
    for (const timeout of ['2147483647', '2147483648', '4294967296', '9999999999']) {
      const answer = await connectPost(setup.served.connectUrl, GET_PROJECT, { id: '1' }, { 'connect-timeout-ms': timeout });
      expect({ timeout, status: answer.status }).toEqual({ timeout, status: 200 });
    }
  });

  it('runs a compressed call (served by connect-node) with such a timeout too', async () => {
    const response = await fetch(`${setup.served.connectUrl}${GET_PROJECT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'connect-protocol-version': '1', 'connect-timeout-ms': '4294967296' },
      body: gzipSync(JSON.stringify({ id: '1' })),
    });
    expect(response.status).toBe(200);
  });

  it('runs a gRPC call whose Grpc-Timeout is beyond the longest timer Node keeps (99999999 hours)', async () => {
    const client = connectHttp2(setup.served.connectUrl);
    client.on('error', () => undefined);
    try {
      // GetProjectRequest { id: "1" }, in a gRPC frame: not compressed, 3 bytes.
      const frame = Buffer.from([0, 0, 0, 0, 3, 0x0a, 0x01, 0x31]);
      const stream = client.request({ ':method': 'POST', ':path': GET_PROJECT, 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '99999999H' });
      stream.resume();
      const trailers = await new Promise<Record<string, unknown>>((resolve, reject) => {
        stream.on('trailers', (headers) => resolve(headers));
        stream.on('response', (headers) => {
          if (headers['grpc-status'] !== undefined) resolve(headers);
        });
        stream.on('error', reject);
        stream.end(frame);
      });
      expect({ status: trailers['grpc-status'], message: trailers['grpc-message'] }).toEqual({ status: '0', message: undefined });
    } finally {
      client.close();
    }
  });

  it('refuses a timeout that is not a positive whole number of at most 10 digits with 400 invalid_argument', async () => {
    for (const timeout of ['0', '00', '12345678901', '-5', '1e3', '10.5']) {
      const answer = await connectPost(setup.served.connectUrl, GET_PROJECT, { id: '1' }, { 'connect-timeout-ms': timeout });
      expect({ timeout, status: answer.status, code: (answer.body as { code?: string }).code }).toEqual({ timeout, status: 400, code: 'invalid_argument' });
    }
  });
});

describe('the router process', () => {
  let library: TestSubgraph;
  let dir: string;

  beforeAll(async () => {
    library = await startSubgraph(librarySubgraph());
    dir = await mkdtemp(join(tmpdir(), 'switchyard-hostile-listeners-'));
    await mkdir(join(dir, 'services'));
    const composed = composeSubgraphs([{ name: library.name, url: library.url, sdl: library.typeDefs }]);
    await writeFile(join(dir, 'supergraph.graphql'), composed.supergraphSdl);
  });

  afterAll(async () => {
    await library?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function attackRouterProcess(workers: number): Promise<void> {
    const [port, connectPort] = [await freePort(), await freePort()];
    const config = join(dir, `router-${workers}.config.yaml`);
    await writeFile(
      config,
      [
        'version: "1"',
        `listen_addr: "127.0.0.1:${port}"`,
        'execution_config:',
        '  file:',
        '    path: supergraph.graphql',
        'connect_rpc:',
        '  enabled: true',
        '  server:',
        `    listen_addr: "127.0.0.1:${connectPort}"`,
        '  services:',
        '    path: services',
        '',
      ].join('\n'),
    );
    const child = spawnCli(['router', '-c', config, ...(workers > 1 ? ['--workers', String(workers)] : [])], { cwd: dir });
    try {
      await waitFor(async () => (child.output().stdout.match(/"msg":"Connect endpoints listening"/g) ?? []).length >= workers);
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/live`)).status === 200);
      // The reproduced crash: resets before the Connect listener has seen 4 bytes. Many, so every worker gets some.
      const resets: Array<Promise<void>> = [];
      for (let i = 0; i < 40; i++) {
        resets.push(resetAfter(connectPort, '', 0), resetAfter(connectPort, 'PR', 5), resetAfter(connectPort, 'GET / HT', 5), resetAfter(port, 'POST /graphql HTTP/1.1\r\n', 5));
      }
      await Promise.all(resets);
      await sleep(500);
      expect(child.exitCode, child.output().stderr).toBeNull();
      expect(child.output().stderr).not.toMatch(/exited|ECONNRESET|Unhandled/);
      const ok = await exchange(connectPort, 'GET /nothing.v1.Nothing/Here HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(ok.status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await child.exited;
    }
  }

  it('stays up when connections to the Connect and main listeners are reset before they send 4 bytes', async () => {
    await attackRouterProcess(1);
  });

  it('loses no worker under --workers 2 to the same resets', async () => {
    await attackRouterProcess(2);
  });
});
