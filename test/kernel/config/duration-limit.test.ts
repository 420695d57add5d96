/**
 * Durations that set a timer and are longer than a Node timer holds (2^31-1
 * ms, about 24.8 days) are refused when the config loads; lifetimes that set
 * no timer (cache TTLs, cors.max_age) may be longer. Node would turn each into a 1 ms timer: a
 * `refresh_interval: 600h` fetched the JWKS every millisecond, a
 * `request_timeout: 600h` failed every subgraph call. One config file per
 * key, loaded as `switchyard router -c` loads it (every built-in section).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinSections } from '../../../src/cli/builtin-plugins.js';
import { loadConfigFile } from '../../../src/kernel/config/index.js';
import { configRejectionOf } from './config-errors.js';

const LONGEST = '596h31m23.647s';
const TOO_LONG = '596h31m23.648s';

/** Every duration key of the core and the built-in sections that sets a timer, with the YAML that sets it to `<d>`. */
const DURATION_KEYS: ReadonlyArray<readonly [path: string, yaml: string]> = [
  ['shutdown_delay', 'shutdown_delay: <d>'],
  ['grace_period', 'grace_period: <d>'],
  ['traffic_shaping.all.request_timeout', 'traffic_shaping: {all: {request_timeout: <d>}}'],
  ['traffic_shaping.subgraphs.library.request_timeout', 'traffic_shaping: {subgraphs: {library: {request_timeout: <d>}}}'],
  ['traffic_shaping.all.retry.interval', 'traffic_shaping: {all: {retry: {interval: <d>}}}'],
  ['traffic_shaping.all.retry.max_duration', 'traffic_shaping: {all: {retry: {max_duration: <d>}}}'],
  ['traffic_shaping.all.circuit_breaker.cooldown', 'traffic_shaping: {all: {circuit_breaker: {enabled: true, cooldown: <d>}}}'],
  ['authentication.jwt.jwks[0].refresh_interval', 'authentication: {jwt: {jwks: [{url: "http://127.0.0.1:9/jwks.json", refresh_interval: <d>}]}}'],
  ['authentication.jwt.jwks[0].timeout', 'authentication: {jwt: {jwks: [{url: "http://127.0.0.1:9/jwks.json", timeout: <d>}]}}'],
  ['authentication.jwt.jwks[0].min_refetch_interval', 'authentication: {jwt: {jwks: [{url: "http://127.0.0.1:9/jwks.json", min_refetch_interval: <d>}]}}'],
  ['persisted_operations.manifest.poll_interval', 'persisted_operations: {enabled: true, manifest: {enabled: true, poll_interval: <d>}}'],
  ['persisted_operations.manifest.poll_jitter', 'persisted_operations: {enabled: true, manifest: {enabled: true, poll_jitter: <d>}}'],
  ['response_cache.circuit_breaker.cool_down', 'response_cache: {circuit_breaker: {cool_down: <d>}}'],
  ['response_cache.circuit_breaker.timeout', 'response_cache: {circuit_breaker: {timeout: <d>}}'],
  ['profiler.upload_interval', 'profiler: {upload_interval: <d>}'],
];

/** Duration keys that are lifetimes, not timers (cache TTLs, a header value): a month or a year is a normal setting. */
const LIFETIME_KEYS: ReadonlyArray<readonly [path: string, yaml: string]> = [
  ['cors.max_age', 'cors: {enabled: true, max_age: <d>}'],
  ['persisted_operations.lookup_cache.ttl', 'persisted_operations: {enabled: true, lookup_cache: {ttl: <d>}}'],
  ['automatic_persisted_queries.cache.ttl', 'automatic_persisted_queries: {enabled: true, cache: {ttl: <d>}}'],
  ['response_cache.fallback_ttl', 'response_cache: {fallback_ttl: <d>}'],
];

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-durations-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
async function configFile(yaml: string): Promise<string> {
  const file = join(dir, `router-${files++}.config.yaml`);
  await writeFile(file, `version: "1"\n${yaml}\n`);
  return file;
}

const load = (file: string, env: NodeJS.ProcessEnv = {}) => loadConfigFile(file, { env, sections: builtinSections });

describe('durations past what a timer holds', () => {
  it.each(DURATION_KEYS)('refuse %s: 600h stops startup naming the key and the longest duration', async (path, yaml) => {
    const error = await configRejectionOf(async () => load(await configFile(yaml.replace('<d>', '600h'))));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ path, message: `"600h" is too long; the longest duration is ${LONGEST} (about 24.8 days)` });
    expect(error.message).toContain(`${path}: "600h" is too long; the longest duration is ${LONGEST} (about 24.8 days)`);
  });

  it.each(DURATION_KEYS)('accept %s up to the longest duration', async (_path, yaml) => {
    await expect(load(await configFile(yaml.replace('<d>', LONGEST)))).resolves.toBeDefined();
    await expect(configRejectionOf(async () => load(await configFile(yaml.replace('<d>', TOO_LONG))))).resolves.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it.each(LIFETIME_KEYS)('leave %s alone: a 720h or 8760h lifetime sets no timer and loads', async (_path, yaml) => {
    await expect(load(await configFile(yaml.replace('<d>', '720h')))).resolves.toBeDefined();
    await expect(load(await configFile(yaml.replace('<d>', '8760h')))).resolves.toBeDefined();
  });

  it('refuse the reviewer configs: request_timeout and shutdown_delay of 600h both named', async () => {
    const file = await configFile('traffic_shaping: {all: {request_timeout: 600h}}\nshutdown_delay: 600h');
    const error = await configRejectionOf(() => load(file));
    expect(error.issues.map((issue) => issue.path).sort()).toEqual(['shutdown_delay', 'traffic_shaping.all.request_timeout']);
  });

  it('refuse a value from the environment, naming the variable', async () => {
    const error = await configRejectionOf(async () => load(await configFile('listen_addr: "127.0.0.1:4000"'), { SHUTDOWN_DELAY: '1000h' }));
    expect(error.issues[0]).toMatchObject({ env: 'SHUTDOWN_DELAY', message: `"1000h" is too long; the longest duration is ${LONGEST} (about 24.8 days)` });
  });

  it('refuse a number too long for any timer written in another unit', async () => {
    for (const text of ['2147483648ms', '35791395m']) {
      const error = await configRejectionOf(async () => load(await configFile(`grace_period: ${text}`)));
      expect(error.issues[0]?.message).toMatch(/is too long; the longest duration is 596h31m23\.647s/);
    }
    // Past what a millisecond count holds exactly: refused by any key, timer or not.
    for (const yaml of ['grace_period: 99999999999999999999h', 'response_cache: {fallback_ttl: 99999999999999999999h}']) {
      const error = await configRejectionOf(async () => load(await configFile(yaml)));
      expect(error.issues[0]?.message).toMatch(/"99999999999999999999h" is too large/);
    }
  });
});
