/**
 * Side listeners from the SDK: a plugin asks `ctx.listen` for a port of its
 * own and gets the address parsing, bind errors, listener guard, exposure
 * warning and graceful close the built-in listeners (Connect, invalidation,
 * metrics, profiling) have. Real routers, real sockets, real clients.
 */
import { connect as connectHttp2 } from 'node:http2';
import { createServer, type AddressInfo, type Server, type Socket, connect as connectTcp } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, definePlugin, ListenError, RouterError, startSideListener, z, type Logger, type PluginContext, type PluginListenOptions } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { captureLogs } from '../../support/capture-logs.js';
import { librarySubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
});
afterAll(async () => {
  await library?.close();
});

/**
 * A third-party plugin as docs/plugins.md shows it: `admin.listen_addr`
 * gets an admin port answering `GET /status`; `/slow` answers after 300 ms,
 * `/never` never. `extra` opens a second listener first (to see both closed).
 */
function adminPlugin(seen: { ctx?: PluginContext; url?: string; extraUrl?: string } = {}, more: Partial<PluginListenOptions> = {}) {
  return definePlugin({
    name: 'admin',
    configKey: 'admin',
    options: z.object({ listen_addr: z.string(), extra_addr: z.string().optional() }),
    async setup(ctx, options) {
      seen.ctx = ctx;
      if (options.extra_addr !== undefined) {
        const extra = await ctx.listen({ name: 'admin-extra', address: options.extra_addr, handler: (_req, res) => res.end('extra') });
        seen.extraUrl = extra.url;
      }
      const listener = await ctx.listen({
        name: 'admin',
        address: options.listen_addr,
        configKey: 'admin.listen_addr',
        purpose: 'the admin endpoints',
        handler(req, res) {
          if (req.url === '/slow') setTimeout(() => res.end('slow done'), 300);
          else if (req.url === '/never') return;
          else res.end(`status from HTTP/${req.httpVersion}`);
        },
        ...more,
      } as PluginListenOptions);
      seen.url = listener.url;
      return {};
    },
  });
}

function startAdmin(
  options: { listen_addr: string; extra_addr?: string },
  logger?: Logger,
  seen: Parameters<typeof adminPlugin>[0] = {},
  more: Partial<PluginListenOptions> = {},
): Promise<TestRouter> {
  return startTestRouter({ subgraphs: [library], plugins: [adminPlugin(seen, more)(options)], logger });
}

async function takenPort(): Promise<{ port: number; holder: Server }> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  return { port: (holder.address() as AddressInfo).port, holder };
}

/** Whether a TCP connection to `url` is refused (nothing listens there any more). */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connectTcp({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Sends raw bytes and resolves with everything the server sent back before closing. */
function rawExchange(url: string, write: (socket: Socket) => void): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connectTcp({ host: hostname, port: Number(port) });
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(received));
    socket.once('connect', () => write(socket));
  });
}

async function bindFailure(options: { listen_addr: string; extra_addr?: string }, seen: Parameters<typeof adminPlugin>[0] = {}): Promise<unknown> {
  return startAdmin(options, undefined, seen).then(
    async (router) => {
      await router.close();
      return undefined;
    },
    (error: unknown) => error,
  );
}

describe("ctx.listen: a plugin's own port", () => {
  it('serves on IPv4 loopback, without an exposure warning, and is closed when the router closes', async () => {
    const { logger, lines } = captureLogs();
    const seen: { url?: string } = {};
    const router = await startAdmin({ listen_addr: '127.0.0.1:0' }, logger, seen);
    try {
      expect(seen.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${seen.url}/status`)).text()).toBe('status from HTTP/1.1');
      expect(lines.filter((line) => line.level === 40 || line.level === 'warn')).toEqual([]);
    } finally {
      await router.close();
    }
    expect(await refused(seen.url!)).toBe(true);
  });

  it('serves on IPv6 loopback ([::1]:port), with the host in brackets in its URL', async () => {
    const seen: { url?: string } = {};
    const router = await startAdmin({ listen_addr: '[::1]:0' }, undefined, seen);
    try {
      expect(seen.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect(await (await fetch(`${seen.url}/status`)).text()).toBe('status from HTTP/1.1');
    } finally {
      await router.close();
    }
    expect(await refused(seen.url!)).toBe(true);
  });

  it('warns when bound beyond loopback, naming the listener and the host', async () => {
    const { logger, lines } = captureLogs();
    const router = await startAdmin({ listen_addr: '0.0.0.0:0' }, logger);
    try {
      const warnings = lines.filter((line) => line.listener === 'The admin listener');
      expect(warnings).toMatchObject([
        { plugin: 'admin', host: '0.0.0.0', msg: 'The admin listener listens beyond loopback over plain HTTP; put TLS or a firewall in front of it' },
      ]);
    } finally {
      await router.close();
    }
  });

  it("stops startup with a ListenError naming the plugin, the key and the reason when the port is taken, and closes the plugin's other listener", async () => {
    const { port, holder } = await takenPort();
    const seen: { extraUrl?: string } = {};
    try {
      const error = await bindFailure({ listen_addr: `127.0.0.1:${port}`, extra_addr: '127.0.0.1:0' }, seen);
      expect(error).toBeInstanceOf(ListenError);
      expect(error).toBeInstanceOf(ConfigError);
      const failure = error as ListenError;
      expect({ code: failure.code, plugin: failure.plugin, message: failure.message, issues: failure.issues }).toEqual({
        code: 'CONFIG_INVALID',
        plugin: 'admin',
        message: `[admin] cannot listen on 127.0.0.1:${port} for the admin endpoints (admin.listen_addr): listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
        issues: [{ path: 'admin.listen_addr', plugin: 'admin', message: `cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}` }],
      });
      expect((failure.cause as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
      // The listener the plugin opened before the failing one does not outlive the failed startup.
      expect(seen.extraUrl).toBeDefined();
      expect(await refused(seen.extraUrl!)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('refuses an address that is not host:port, one not on this machine, and a host name that does not resolve, each as a ListenError', async () => {
    const malformed = await bindFailure({ listen_addr: 'nowhere' });
    expect((malformed as ListenError).message).toBe(
      '[admin] cannot listen on nowhere for the admin endpoints (admin.listen_addr): invalid listen address "nowhere": expected host:port',
    );
    const portTooHigh = await bindFailure({ listen_addr: '127.0.0.1:70000' });
    expect((portTooHigh as ListenError).message).toContain('invalid listen address "127.0.0.1:70000"');
    // 192.0.2.0/24 is reserved for documentation: never an address of this machine.
    const notHere = await bindFailure({ listen_addr: '192.0.2.1:0' });
    expect(notHere).toBeInstanceOf(ListenError);
    expect((notHere as ListenError).message).toMatch(/^\[admin\] cannot listen on 192\.0\.2\.1:0 for the admin endpoints \(admin\.listen_addr\): listen EADDRNOTAVAIL/);
    // .invalid never resolves (RFC 2606).
    const unresolvable = await bindFailure({ listen_addr: 'no-such-host.invalid:0' });
    expect(unresolvable).toBeInstanceOf(ListenError);
    expect((unresolvable as ListenError).message).toMatch(/^\[admin\] cannot listen on no-such-host\.invalid:0 .*: getaddrinfo (ENOTFOUND|EAI_AGAIN)/);
  });

  it('guards the port: garbage is answered 400, headers trickled past the header bound 408, resets are survived, and others are still served', async () => {
    const seen: { url?: string } = {};
    const router = await startAdmin({ listen_addr: '127.0.0.1:0' }, undefined, seen, {
      timeouts: { headersMs: 300, requestMs: 300, keepAliveMs: 300, stallMs: 300, checkIntervalMs: 100 },
    });
    try {
      const url = seen.url!;
      expect(await rawExchange(url, (socket) => socket.write('\x16\x03\x01 not http at all\r\n\r\n'))).toMatch(/^HTTP\/1\.1 400 Bad Request/);
      const started = Date.now();
      const slow = await rawExchange(url, (socket) => {
        socket.write('GET /status HTTP/1.1\r\nHost: x\r\n');
        const trickle = setInterval(() => socket.writable && socket.write('X-A: b\r\n'), 50);
        socket.once('close', () => clearInterval(trickle));
      });
      expect(slow).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
      expect(Date.now() - started).toBeLessThan(3_000);
      await rawExchange(url, (socket) => {
        socket.write('GET /status HTTP/1.1\r\nHo');
        socket.resetAndDestroy();
      });
      expect(await (await fetch(`${url}/status`)).text()).toBe('status from HTTP/1.1');
    } finally {
      await router.close();
    }
  });

  it('speaks HTTP/1.1 and cleartext HTTP/2 on one port when asked for http2', async () => {
    const seen: { url?: string } = {};
    const router = await startAdmin({ listen_addr: '127.0.0.1:0' }, undefined, seen, { http2: true });
    try {
      expect(await (await fetch(`${seen.url}/status`)).text()).toBe('status from HTTP/1.1');
      const session = connectHttp2(seen.url!);
      session.on('error', () => undefined);
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ':path': '/status' });
        let text = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk: string) => (text += chunk));
        stream.once('end', () => resolve(text));
        stream.once('error', reject);
      });
      session.close();
      expect(body).toBe('status from HTTP/2.0');
    } finally {
      await router.close();
    }
  });

  it('lets a request in flight at shutdown finish, then refuses connections', async () => {
    const seen: { url?: string } = {};
    const router = await startAdmin({ listen_addr: '127.0.0.1:0' }, undefined, seen);
    const answer = fetch(`${seen.url}/slow`).then((response) => response.text());
    await new Promise((resolve) => setTimeout(resolve, 50));
    await router.close();
    expect(await answer).toBe('slow done');
    expect(await refused(seen.url!)).toBe(true);
  });

  it('refuses to open a listener once the plugin is stopped', async () => {
    const seen: { ctx?: PluginContext } = {};
    const router = await startAdmin({ listen_addr: '127.0.0.1:0' }, undefined, seen);
    await router.close();
    const error = await seen.ctx!.listen({ name: 'late', address: '127.0.0.1:0', handler: (_req, res) => res.end() }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RouterError);
    expect((error as RouterError).message).toBe('[admin] cannot open the late listener: the plugin is stopped');
  });
});

describe('startSideListener', () => {
  it('closes a connection whose request is never answered once the grace period is over', async () => {
    const listener = await startSideListener({ name: 'stuck', address: ':0', handler: () => undefined });
    expect(listener.host).toBe('127.0.0.1');
    const answer = fetch(`${listener.url}/`).then(
      () => 'answered',
      () => 'connection closed',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await listener.close(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await answer).toBe('connection closed');
    // Closing again is harmless.
    await listener.close();
  });
});

describe('a side listener under node:cluster (what --workers does)', () => {
  const tsx = new URL('../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
  const fixture = new URL('../fixtures/side-listener-cluster.ts', import.meta.url).pathname;

  /** Runs the fixture with two workers on `address`; resolves with their reports and the child to stop. */
  async function runCluster(address: string): Promise<{ workers: Array<Record<string, unknown>>; stop(): Promise<void> }> {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--import', tsx, fixture, address], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const line = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n')) resolve(text.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`the cluster fixture exited (${code}) before reporting`)));
    });
    const stop = async () => {
      child.kill('SIGTERM');
      await exited;
    };
    return { workers: (JSON.parse(line) as { workers: Array<Record<string, unknown>> }).workers, stop };
  }

  it('binds the one port for every worker (port 0 gives them the same one) and spreads connections over them', async () => {
    const { workers, stop } = await runCluster('127.0.0.1:0');
    try {
      expect(workers).toHaveLength(2);
      const addresses = new Set(workers.map((worker) => worker.address));
      expect(addresses.size).toBe(1);
      const url = `http://${[...addresses][0] as string}`;
      const pids = new Set<string>();
      for (let i = 0; i < 8; i++) {
        const response = await fetch(url, { headers: { connection: 'close' } });
        pids.add(response.headers.get('x-pid') ?? '');
      }
      expect(pids).toEqual(new Set(workers.map((worker) => String(worker.pid))));
    } finally {
      await stop();
    }
  }, 60_000);

  it('reports a taken port as a ListenError in every worker', async () => {
    const { port, holder } = await takenPort();
    try {
      const { workers, stop } = await runCluster(`127.0.0.1:${port}`);
      await stop();
      expect(workers).toEqual([
        expect.objectContaining({
          listenError: true,
          error: expect.stringMatching(new RegExp(`^\\[probe\\] cannot listen on 127\\.0\\.0\\.1:${port} for the probe listener \\(probe\\.listen_addr\\): .*EADDRINUSE`)),
        }),
        expect.objectContaining({ listenError: true, error: expect.stringMatching(/EADDRINUSE/) }),
      ]);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  }, 60_000);
});
