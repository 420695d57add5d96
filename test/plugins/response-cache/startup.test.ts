import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, RouterError } from '../../../src/index.js';
import { loadConfigText } from '../../support/config-file.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { capturingLogger, freePort, memoryCache, SHARED_KEY, startCacheGraph, type CacheGraph } from './fixtures.js';

let graph: CacheGraph;
let redis: RedisServer;
let dir: string;

beforeAll(async () => {
  [graph, redis, dir] = await Promise.all([startCacheGraph(), startRedis(), mkdtemp(join(tmpdir(), 'switchyard-cache-config-'))]);
});

afterAll(async () => {
  await Promise.all([graph?.close(), redis?.stop(), dir ? rm(dir, { recursive: true, force: true }) : undefined]);
});

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<RouterError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof RouterError)) throw new Error(`expected a RouterError, got ${String(error)}`);
  return error;
}

function cacheLines(lines: Array<Record<string, unknown>>) {
  return lines.filter((line) => line.plugin === 'response-cache' || line.plugin === 'cache-tags');
}

describe('startup log', () => {
  it('logs Response cache enabled once, with the memory fields', async () => {
    const { logger, lines } = capturingLogger('info');
    const router = await graph.router({ cache: memoryCache, logger });
    await router.close();
    expect(cacheLines(lines)).toEqual([
      {
        level: 'info',
        time: expect.any(Number),
        plugin: 'response-cache',
        msg: 'Response cache enabled',
        fallback_ttl: '30s',
        storage_provider: 'memory',
        max_entries: 10000,
        max_size_bytes: 128_000_000,
      },
    ]);
  });

  it('logs the shared store fields, with fallback_ttl as configured', async () => {
    const { logger, lines } = capturingLogger('info');
    const router = await graph.router({
      cache: { enabled: true, fallback_ttl: '1m30s', key_prefix: 'shop:', storage: { provider: 'sharedstore', provider_id: 'main' } },
      config: { storage_providers: { sharedstore: [{ id: 'main', urls: [redis.url] }] } },
      logger,
    });
    await router.close();
    expect(cacheLines(lines)).toEqual([
      {
        level: 'info',
        time: expect.any(Number),
        plugin: 'response-cache',
        msg: 'Response cache enabled',
        fallback_ttl: '1m30s',
        storage_provider: 'sharedstore',
        key_prefix: 'shop:',
        storage_provider_id: 'main',
      },
    ]);
  });

  it('logs nothing when the cache is disabled', async () => {
    const { logger, lines } = capturingLogger('trace');
    const router = await graph.router({ cache: { enabled: false }, logger });
    await router.query('{ products { upc } }');
    await router.close();
    expect(cacheLines(lines)).toEqual([]);
  });

  it.each([
    ['with', SHARED_KEY],
    // INTERFACES.md: not started, one warning; a key for an endpoint that never starts is not asked for.
    ['without', undefined],
  ])('warns once and starts no endpoint when the endpoint is enabled but the cache is not (%s a shared key)', async (_with, sharedKey) => {
    const port = await freePort();
    const { logger, lines } = capturingLogger('info');
    const router = await graph.router({
      cache: { enabled: false, invalidation: { endpoint: { enabled: true, listen_addr: `127.0.0.1:${port}`, ...(sharedKey ? { shared_key: sharedKey } : {}) } } },
      logger,
    });
    const refused = await fetch(`http://127.0.0.1:${port}/invalidation`, { method: 'POST' }).then(
      () => false,
      () => true,
    );
    await router.close();
    expect(refused).toBe(true);
    expect(cacheLines(lines)).toEqual([
      { level: 'warn', time: expect.any(Number), plugin: 'response-cache', msg: 'Invalidation endpoint not started: response_cache.enabled is false' },
    ]);
  });

  it('is switched on by the config file, with cache-tags before it', async () => {
    const setup = await loadConfigText(dir, 'response_cache:\n  enabled: true\n  storage:\n    provider: memory\n');
    expect(setup.plugins.map((plugin) => plugin.name)).toEqual(['cache-tags', 'response-cache']);
    const off = await loadConfigText(dir, 'response_cache:\n  enabled: false\n');
    expect(off.plugins).toEqual([]);
  });
});

describe('startup failures', () => {
  it('fails for a provider_id storage_providers does not declare, from the file and in code', async () => {
    const text = [
      'storage_providers:',
      '  sharedstore:',
      `    - id: main`,
      `      urls: ["${redis.url}"]`,
      'response_cache:',
      '  enabled: true',
      '  storage:',
      '    provider_id: mian',
    ].join('\n');
    const fromFile = await failure(loadConfigText(dir, text));
    expect(fromFile).toBeInstanceOf(ConfigError);
    expect(fromFile.code).toBe('CONFIG_INVALID');
    expect(fromFile.message).toContain('[response-cache] response_cache.storage.provider_id: "mian" is not in storage_providers.sharedstore (declared: main)');
    const inCode = await failure(graph.router({ cache: { enabled: true, storage: { provider_id: 'mian' } } }));
    expect(inCode.code).toBe('CONFIG_INVALID');
    expect(inCode.message).toContain('"mian" is not in storage_providers.sharedstore (none are declared)');
  });

  it.each([['0s'], ['500ms'], ['-1s']])('fails for fallback_ttl %s in the file', async (value) => {
    const error = await failure(loadConfigText(dir, `response_cache:\n  enabled: true\n  fallback_ttl: ${value}\n  storage:\n    provider: memory\n`));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toMatch(/\[response-cache\] response_cache\.fallback_ttl: .*(must be at least 1s|negative)/);
  });

  it('fails for fallback_ttl below 1s from the environment', async () => {
    const error = await failure(loadConfigText(dir, 'response_cache:\n  enabled: true\n  storage:\n    provider: memory\n', { RESPONSE_CACHE_FALLBACK_TTL: '0s' }));
    expect(error.message).toContain('[response-cache] RESPONSE_CACHE_FALLBACK_TTL (response_cache.fallback_ttl): must be at least 1s');
  });

  it('fails when enabled without storage', async () => {
    const error = await failure(loadConfigText(dir, 'response_cache:\n  enabled: true\n'));
    expect(error.message).toContain(
      '[response-cache] response_cache.storage: is required when enabled is true; set storage.provider: memory, or sharedstore with storage.provider_id',
    );
  });

  it('fails for a shared_key under 32 characters, without repeating it', async () => {
    const error = await failure(graph.router({ cache: { ...memoryCache, invalidation: { endpoint: { enabled: true, shared_key: 'hunter2-is-not-enough' } } } }));
    expect(error.message).toContain('response_cache.invalidation.endpoint.shared_key: must be at least 32 characters when the endpoint is enabled (it has 21)');
    expect(error.message).not.toContain('hunter2');
  });

  it('fails when the shared store cannot be reached', async () => {
    const port = await freePort();
    const error = await failure(
      graph.router({
        cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'gone' } },
        config: { storage_providers: { sharedstore: [{ id: 'gone', urls: [`redis://:secret@127.0.0.1:${port}`] }] } },
      }),
    );
    expect(error.code).toBe('RESPONSE_CACHE_STORE_UNAVAILABLE');
    expect(error.message).toContain(`[response-cache] cannot reach shared store "gone" (127.0.0.1:${port}): `);
    expect(error.message).not.toContain('secret');
  });

  it('refuses a store older than Redis 7.0', async () => {
    const old = await startFakeRedis('6.2.14');
    try {
      const error = await failure(
        graph.router({
          cache: { enabled: true, storage: { provider: 'sharedstore', provider_id: 'old' } },
          config: { storage_providers: { sharedstore: [{ id: 'old', urls: [`redis://127.0.0.1:${old.port}`] }] } },
        }),
      );
      expect(error.code).toBe('RESPONSE_CACHE_STORE_UNSUPPORTED');
      expect(error.message).toBe(`[response-cache] shared store "old" (127.0.0.1:${old.port}): the server runs Redis 6.2.14; the response cache needs Redis 7.0 or newer`);
    } finally {
      await old.close();
    }
  });

  it('fails when the invalidation endpoint address is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const error = await failure(
        graph.router({ cache: { ...memoryCache, invalidation: { endpoint: { enabled: true, listen_addr: `127.0.0.1:${port}`, shared_key: SHARED_KEY } } } }),
      );
      expect(error.message).toContain('EADDRINUSE');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

/**
 * A stand-in for an old Redis server (Debian ships only 7.x): speaks just
 * enough RESP for a client to connect and read `INFO server`.
 */
async function startFakeRedis(version: string): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((socket) => {
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      // Each command is an array of bulk strings: *<n>\r\n($<len>\r\n<arg>\r\n){n}
      for (;;) {
        const command = readCommand(buffered);
        if (!command) break;
        buffered = buffered.slice(command.length);
        if (command.args[0]?.toUpperCase() === 'INFO') {
          const info = `# Server\r\nredis_version:${version}\r\nredis_mode:standalone\r\n`;
          socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
        } else {
          socket.write('+OK\r\n');
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

function readCommand(text: string): { args: string[]; length: number } | undefined {
  const header = /^\*(\d+)\r\n/.exec(text);
  if (!header) return undefined;
  let offset = header[0].length;
  const args: string[] = [];
  for (let i = 0; i < Number(header[1]); i++) {
    const bulk = /^\$(\d+)\r\n/.exec(text.slice(offset));
    if (!bulk) return undefined;
    const start = offset + bulk[0].length;
    const end = start + Number(bulk[1]);
    if (text.length < end + 2) return undefined;
    args.push(text.slice(start, end));
    offset = end + 2;
  }
  return { args, length: offset };
}
