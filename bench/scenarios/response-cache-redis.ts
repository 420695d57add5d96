/**
 * Redis for the `response-cache` scenario's shared-store contenders: one
 * `redis-server` (an empty, non-persistent one on a free loopback port),
 * started by the bench process the first time a contender needs it and
 * killed when the bench exits; and a freezing proxy in front of it, for
 * the contender that measures a Redis that stops answering.
 *
 * The proxy passes every byte through until the router's first command
 * naming a cache key (the first cache read of the first GraphQL request:
 * the answer check), so the router starts and checks its Redis normally.
 * From then on it holds every reply, as a server frozen by `DEBUG SLEEP`
 * or `SIGSTOP` would: connections stay open, commands go unanswered, and
 * only the router's own deadline (the breaker's `timeout`) ends the wait.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** The key prefix of the response cache's entries (its default `key_prefix`). */
const CACHE_KEY_MARK = Buffer.from('router_response_cache:');

let server: Promise<{ port: number; child: ChildProcess }> | undefined;

/** The scenario's Redis, started on first use: `redis://127.0.0.1:<port>`. */
export async function benchRedisUrl(): Promise<string> {
  server ??= startRedisServer();
  return `redis://127.0.0.1:${(await server).port}`;
}

/** Port of the scenario's Redis, started on first use. */
export async function benchRedisPort(): Promise<number> {
  server ??= startRedisServer();
  return (await server).port;
}

async function startRedisServer(): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
    stdio: 'ignore',
  });
  process.once('exit', () => child.kill('SIGKILL'));
  child.unref();
  const spawnError = new Promise<never>((_, reject) => child.once('error', (error) => reject(new Error(`redis-server could not start: ${error.message}`))));
  await Promise.race([waitForPong(port), spawnError]);
  return { port, child };
}

/** A proxy to Redis that freezes at the first cache command. */
export interface FreezingProxy {
  /** `redis://127.0.0.1:<proxy port>`. */
  readonly url: string;
  /** Whether it has frozen. */
  frozen(): boolean;
  close(): Promise<void>;
}

/** Starts a freezing proxy in front of the Redis at `redisPort`. */
export async function startFreezingProxy(redisPort: number): Promise<FreezingProxy> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const proxy: Server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      if (!frozen && chunk.includes(CACHE_KEY_MARK)) frozen = true;
      if (!frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!frozen) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(0, '127.0.0.1', () => resolve());
  });
  proxy.unref();
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    frozen: () => frozen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once the server answers PING (10s at most). */
async function waitForPong(port: number): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    const answered = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(500, () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(false));
      socket.once('data', (chunk) => {
        socket.destroy();
        resolve(chunk.toString().startsWith('+PONG'));
      });
      socket.once('connect', () => socket.write('PING\r\n'));
    });
    if (answered) return;
    if (Date.now() > end) throw new Error(`redis-server on port ${port} did not answer PING within 10s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
