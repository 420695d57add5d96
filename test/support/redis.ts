/**
 * Real Redis servers for tests: `redis-server` processes on free loopback
 * ports, started and stopped by the test that needs them.
 *
 * ```ts
 * const redis = await startRedis();              // one server
 * redis.url;                                     // redis://127.0.0.1:<port>
 * await redis.cli('DBSIZE');                     // '3' (redis-cli --raw output, trimmed)
 * await redis.kill(); await redis.restart();     // simulate an outage, then recovery
 * await redis.stop();
 *
 * const cluster = await startRedisCluster();     // 3 masters, slots assigned, state ok
 * cluster.urls;                                  // seed URLs, one per node
 * await cluster.stop();
 * ```
 *
 * Servers keep nothing on disk (no RDB, no AOF) and bind 127.0.0.1 only.
 * Every process still running when the test process exits is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One `redis-server` process on 127.0.0.1. */
export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Runs one command with `redis-cli --raw` against this server; resolves with its trimmed output. */
  cli(...args: string[]): Promise<string>;
  /** Kills the process at once (SIGKILL), as a crash would; clients see the connection drop. */
  kill(): Promise<void>;
  /** Starts the server again on the same port, empty, after `kill()`. */
  restart(): Promise<void>;
  /** Stops the server and removes its working folder. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A Redis Cluster of local masters, every slot assigned. */
export interface RedisCluster {
  readonly nodes: readonly RedisServer[];
  /** Seed URLs, one per node. */
  readonly urls: readonly string[];
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of `startRedis`. */
export interface StartRedisOptions {
  /** Extra `redis-server` arguments, e.g. `['--maxmemory', '10mb']`. Default: none. */
  readonly args?: readonly string[];
}

/** Options of `startRedisCluster`. */
export interface StartRedisClusterOptions {
  /** Number of master nodes (no replicas). Default: 3. */
  readonly masters?: number;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts a standalone Redis server on a free loopback port. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  return launch(options.args ?? [], false);
}

/** Starts `masters` Redis servers in cluster mode and joins them into one cluster. */
export async function startRedisCluster({ masters = 3 }: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) nodes.push(await launch(['--cluster-node-timeout', '2000'], true));
    await runCli(['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
    await waitFor(async () => {
      const states = await Promise.all(nodes.map((n) => n.cli('CLUSTER', 'INFO')));
      return states.every((info) => info.includes('cluster_state:ok'));
    }, 'the cluster to reach cluster_state:ok');
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, urls: nodes.map((n) => n.url), stop, [Symbol.asyncDispose]: stop };
}

async function launch(extraArgs: readonly string[], cluster: boolean): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-redis-'));
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort(cluster);
    const args = serverArgs(port, dir, cluster, extraArgs);
    try {
      let child = await spawnServer(args);
      const server: RedisServer = {
        port,
        url: `redis://127.0.0.1:${port}`,
        cli: (...command) => runCli(['-p', String(port), '--raw', ...command]),
        async kill() {
          await terminate(child, 'SIGKILL');
        },
        async restart() {
          if (child.exitCode === null && child.signalCode === null) await terminate(child, 'SIGKILL');
          child = await spawnServer(args);
        },
        async stop() {
          await terminate(child, 'SIGTERM');
          await rm(dir, { recursive: true, force: true });
        },
        [Symbol.asyncDispose]: () => server.stop(),
      };
      return server;
    } catch (error) {
      // Another process may have taken the port between the check and the start.
      lastError = error;
    }
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}

function serverArgs(port: number, dir: string, cluster: boolean, extra: readonly string[]): string[] {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'];
  if (cluster) args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`);
  return [...args, ...extra];
}

/** Spawns redis-server and resolves once it accepts connections. */
function spawnServer(args: readonly string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start within 10s:\n${output}`)), 10_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`redis-server exited with code ${code}:\n${output}`)));
    let ready = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      if (ready) return;
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        ready = true;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.once('exit', () => running.delete(child));
        running.add(child);
        resolve(child);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (!ready) output += chunk.toString('utf8');
    });
  });
}

function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

function runCli(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(stdout.trim());
      else reject(new Error(`redis-cli ${args.join(' ')} exited with code ${code}: ${stderr || stdout}`));
    });
  });
}

/** A loopback port that is free now; in cluster mode its bus port (port + 10000) is free too. */
async function freePort(cluster: boolean): Promise<number> {
  for (;;) {
    const port = cluster ? 20_000 + Math.floor(Math.random() * 30_000) : await bindAndRelease(0);
    if (!cluster) return port;
    if ((await isFree(port)) && (await isFree(port + 10_000))) return port;
  }
}

function bindAndRelease(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const bound = server.address();
      const chosen = typeof bound === 'object' && bound ? bound.port : port;
      server.close(() => resolve(chosen));
    });
  });
}

async function isFree(port: number): Promise<boolean> {
  try {
    await bindAndRelease(port);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
