import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/index.js';
import { loadRouterSetup } from '../../../src/setup/index.js';
import { tempDir } from '../../operations/support/operations.js';

let dir: { path: string; remove(): Promise<void> };

beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await dir.remove();
});

async function setup(yaml: string, env: Record<string, string> = {}) {
  await writeFile(join(dir.path, 'router.config.yaml'), yaml);
  return loadRouterSetup({ configPath: join(dir.path, 'router.config.yaml'), env });
}

async function issues(yaml: string, env: Record<string, string> = {}) {
  const error = await setup(yaml, env).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`);
  return error.issues;
}

describe('persisted operations in router.config.yaml', () => {
  it('switches the plugins on from their sections, APQ first', async () => {
    const { plugins, config } = await setup(`version: "1"
persisted_operations:
  enabled: true
  manifest: { enabled: true, poll_interval: 200ms, poll_jitter: 0s }
automatic_persisted_queries:
  enabled: true
  cache: { size: 50, ttl: 1m }
`);
    expect(plugins.map((plugin) => plugin.name)).toEqual(['automatic-persisted-queries', 'persisted-operations']);
    expect(config.sections.persisted_operations).toEqual({
      enabled: true,
      storage: { provider: 'file', path: '.switchyard/operations' },
      manifest: { enabled: true, poll_interval: 200, poll_jitter: 0 },
      safelist: false,
      log_unknown: false,
      lookup_cache: { size: 10_000, ttl: 60_000 },
    });
    expect(config.sections.automatic_persisted_queries).toMatchObject({ enabled: true, cache: { size: 50, ttl: 60_000 } });
  });

  it('adds no plugin while the sections are disabled or absent', async () => {
    expect((await setup('version: "1"\npersisted_operations: { safelist: true }\n')).plugins).toEqual([]);
  });

  it('takes every key from the environment', async () => {
    const { config } = await setup('version: "1"\n', {
      PERSISTED_OPERATIONS_ENABLED: 'true',
      PERSISTED_OPERATIONS_STORAGE_PROVIDER: 'http',
      PERSISTED_OPERATIONS_STORAGE_URL: 'https://cdn.example/operations',
      PERSISTED_OPERATIONS_MANIFEST_ENABLED: 'true',
      PERSISTED_OPERATIONS_MANIFEST_POLL_INTERVAL: '30s',
      PERSISTED_OPERATIONS_SAFELIST: 'true',
      AUTOMATIC_PERSISTED_QUERIES_CACHE_SIZE: '10',
    });
    expect(config.sections.persisted_operations).toMatchObject({
      enabled: true,
      storage: { provider: 'http', url: 'https://cdn.example/operations' },
      manifest: { enabled: true, poll_interval: 30_000, poll_jitter: 5_000 },
      safelist: true,
    });
    expect(config.sections.automatic_persisted_queries).toMatchObject({ enabled: false, cache: { size: 10 } });
  });

  it('refuses bare numbers for durations, unknown keys and unknown providers, naming each key', async () => {
    const found = await issues(`version: "1"
persisted_operations:
  enabled: true
  manifest: { poll_interval: 10 }
  safelist: yes-please
  storage: { provider: s3 }
automatic_persisted_queries:
  cache: { size: 0, max_age: 1s }
`);
    expect(found.map(({ path, message }) => `${path}: ${message}`).sort()).toEqual([
      'automatic_persisted_queries.cache.size: must be at least 1',
      'automatic_persisted_queries.cache: unknown key "max_age"',
      'persisted_operations.manifest.poll_interval: expected a duration with a unit, such as "30s", got the number 10',
      'persisted_operations.safelist: expected true or false, got "yes-please"',
      'persisted_operations.storage.provider: must be one of file, sharedstore, http; got "s3"',
    ]);
  });

  it('refuses a sharedstore provider_id that no storage_providers entry declares', async () => {
    const found = await issues(`version: "1"
storage_providers:
  sharedstore: [{ id: cache, urls: ["redis://127.0.0.1:6379"] }]
persisted_operations:
  enabled: true
  storage: { provider: sharedstore, provider_id: operations }
`);
    expect(found).toEqual([
      {
        path: 'persisted_operations.storage.provider_id',
        plugin: 'persisted-operations',
        message: 'unknown shared store "operations"; declare it under storage_providers.sharedstore',
      },
    ]);
  });

  it('accepts a user name and password in storage.url (sent as HTTP Basic authorization by the store)', async () => {
    const { plugins, config } = await setup(`version: "1"
persisted_operations:
  enabled: true
  storage: { provider: http, url: "https://cdn-user:s3cr3t-pw@cdn.example/operations" }
`);
    expect(plugins.map((plugin) => plugin.name)).toEqual(['persisted-operations']);
    expect(config.sections.persisted_operations).toMatchObject({ storage: { provider: 'http', url: 'https://cdn-user:s3cr3t-pw@cdn.example/operations' } });
  });
});
