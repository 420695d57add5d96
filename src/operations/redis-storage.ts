/**
 * A provider on Redis (a `storage_providers.sharedstore` entry, or
 * `redis://host:port[/db]` on the command line). Each file is a hash
 * `{body, tag}` under `switchyard:operations:{<graph>}/<path>`; the braces put
 * a graph's keys in one cluster slot, so a push is one MULTI/EXEC and the
 * router's manifest poll reads the small `tag` field before the body.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClientType, RedisClusterType } from '@keyv/redis';
import { REDIS_COMMAND_TIMEOUT_MS, STORE_FILE_TIMEOUT_MS, withTimeout } from './command-timeout.js';
import type { ConditionalRead, OperationsStorage, StorageChange } from './storage.js';
import { isOperationFile } from './store-layout.js';

/** Where a Redis store is. */
export interface RedisStorageOptions {
  /** `redis://` or `rediss://` URLs; one, or the seed nodes of a cluster. */
  readonly urls: readonly string[];
  /** Connect as a Redis Cluster client. Default: `false`. */
  readonly cluster?: boolean;
  /** Give up connecting after a few attempts (the CLI) instead of retrying forever (the router). Default: `false`. */
  readonly failFast?: boolean;
  /** Prefix of every key. Default: `switchyard:operations:`. */
  readonly keyPrefix?: string;
  /** How long to wait for another writer's lock. Default: 10 s. */
  readonly lockTimeoutMs?: number;
  /**
   * Longest wait for one read of an operation or a manifest's tag; a manifest or registry body gets at
   * least 10 s. Default: 500 ms, as the APQ shared store.
   */
  readonly commandTimeoutMs?: number;
}

type RedisConnection = RedisClientType | RedisClusterType;

const RELEASE_LOCK = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const LOCK_TTL_MS = 30_000;
/** Longest wait for a graceful close before the connection is dropped. */
const CLOSE_TIMEOUT_MS = 2_000;

/** Opens a Redis store (connects before it resolves). */
export async function openRedisStorage(options: RedisStorageOptions): Promise<RedisStorage> {
  const { createClient, createCluster } = await import('@keyv/redis');
  const reconnectStrategy = (retries: number): number | Error =>
    options.failFast && retries >= 2 ? new Error(`cannot connect to Redis at ${describe(options.urls)}`) : Math.min(100 * 2 ** retries, 3_000);
  const socket = { connectTimeout: 5_000, reconnectStrategy };
  // While Redis is down, commands fail at once (a manifest poll logs it and keeps the previous manifest) instead of queueing until it is back.
  const connection: RedisConnection = options.cluster
    ? (createCluster({ rootNodes: options.urls.map((url) => ({ url, socket })), defaults: { disableOfflineQueue: true } }) as unknown as RedisClusterType)
    : (createClient({ url: options.urls[0], socket, disableOfflineQueue: true }) as unknown as RedisClientType);
  const storage = new RedisStorage(connection, options);
  await storage.connect();
  return storage;
}

/** A store in Redis. */
export class RedisStorage implements OperationsStorage {
  readonly location: string;
  readonly writable = true;
  private readonly prefix: string;
  private readonly lockTimeoutMs: number;
  private readonly commandTimeoutMs: number;
  /** Reads sent and not answered yet (those that gave up included). */
  private unanswered = 0;
  private lastError: Error | undefined;

  constructor(
    private readonly redis: RedisConnection,
    { urls, keyPrefix = 'switchyard:operations:', lockTimeoutMs = 10_000, commandTimeoutMs = REDIS_COMMAND_TIMEOUT_MS }: RedisStorageOptions,
  ) {
    this.location = describe(urls);
    this.prefix = keyPrefix;
    this.lockTimeoutMs = lockTimeoutMs;
    this.commandTimeoutMs = commandTimeoutMs;
    // Without a listener, a connection error would crash the process; commands report it instead.
    redis.on('error', (error: unknown) => {
      this.lastError = error instanceof Error ? error : new Error(String(error));
    });
  }

  /** Connects; a failure names the server. */
  async connect(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (error) {
      const reason = this.lastError?.message ?? (error instanceof Error ? error.message : String(error));
      throw new Error(`cannot connect to the operations store at ${this.location}: ${reason}`, { cause: error });
    }
  }

  async read(path: string): Promise<string | undefined> {
    const body = await this.bounded(path, this.redis.hGet(this.key(path), 'body'), this.fileTimeout(path));
    return body ?? undefined;
  }

  async readIfChanged(path: string, knownTag: string | undefined): Promise<ConditionalRead> {
    const key = this.key(path);
    if (knownTag !== undefined) {
      const tag = await this.bounded(path, this.redis.hGet(key, 'tag'), this.commandTimeoutMs);
      if (tag === null) return { status: 'missing' };
      if (tag === knownTag) return { status: 'unchanged' };
    }
    const [body, tag] = await this.bounded(path, this.redis.hmGet(key, ['body', 'tag']), this.fileTimeout(path));
    if (body === null || body === undefined) return { status: 'missing' };
    return { status: 'found', text: body, tag: tag ?? undefined };
  }

  async withLock<T>(graph: string, work: () => Promise<T>): Promise<T> {
    const lock = this.key(`${encodeURIComponent(graph)}/.lock`);
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + this.lockTimeoutMs;
    while ((await this.redis.set(lock, token, { condition: 'NX', expiration: { type: 'PX', value: LOCK_TTL_MS } })) === null) {
      if (Date.now() > deadline) throw new Error(`another push or delete holds the lock ${lock} on ${this.location}; try again`);
      await sleep(25);
    }
    try {
      return await work();
    } finally {
      await this.redis.eval(RELEASE_LOCK, { keys: [lock], arguments: [token] }).catch(() => undefined);
    }
  }

  /** One MULTI/EXEC for every phase: readers see all of a push or none of it. */
  async commit(_graph: string, phases: ReadonlyArray<readonly StorageChange[]>): Promise<void> {
    const transaction = this.redis.multi();
    for (const change of phases.flat()) {
      const key = this.key(change.path);
      if (change.text === null) transaction.del(key);
      else transaction.hSet(key, { body: change.text, tag: randomBytes(9).toString('base64url') });
    }
    await transaction.exec();
  }

  async close(): Promise<void> {
    if (!this.redis.isOpen) return;
    // A graceful close waits for replies; a server that is down or frozen would never send them.
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS)));
    const connected = !('isReady' in this.redis) || this.redis.isReady;
    // A read that gave up is still waiting for its reply: a graceful close would wait for it too, and once
    // closing, the connection can no longer be destroyed. Dropped at once instead.
    const closed =
      connected && this.unanswered === 0
        ? this.redis.close().then(
            () => 'closed' as const,
            () => 'timeout' as const,
          )
        : Promise.resolve('timeout' as const);
    const outcome = await Promise.race([closed, timedOut]).finally(() => clearTimeout(timer));
    if (outcome === 'timeout') {
      try {
        this.redis.destroy();
      } catch {
        // Already closing: the connection ends when the server answers; it must not keep the process alive meanwhile.
        if ('unref' in this.redis) this.redis.unref();
      }
    }
  }

  /** One operation's file is small: the short deadline; a manifest or registry may be megabytes. */
  private fileTimeout(path: string): number {
    return isOperationFile(path) ? this.commandTimeoutMs : Math.max(this.commandTimeoutMs, STORE_FILE_TIMEOUT_MS);
  }

  /** A read that gives up after `ms`: a frozen Redis costs a request that long, not forever. */
  private async bounded<T>(path: string, command: Promise<T>, ms: number): Promise<T> {
    this.unanswered++;
    const answered = () => void this.unanswered--;
    command.then(answered, answered);
    try {
      return await withTimeout(command, ms);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`cannot read ${this.location}/${path}: ${reason}`, { cause: error });
    }
  }

  /** `prefix{graph}/rest`: the graph segment is the cluster hash tag. */
  private key(path: string): string {
    const slash = path.indexOf('/');
    return `${this.prefix}{${path.slice(0, slash)}}${path.slice(slash)}`;
  }
}

/** The servers, without user or password. */
function describe(urls: readonly string[]): string {
  return urls
    .map((url) => {
      try {
        const parsed = new URL(url);
        return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
      } catch {
        return 'redis';
      }
    })
    .join(', ');
}
