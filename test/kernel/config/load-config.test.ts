import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RouterError } from '../../../src/kernel/errors.js';
import {
  buildConfigSchema,
  duration,
  loadConfigFile,
  parseConfig,
  parseConfigText,
  parseConfigValue,
  readSection,
  z,
  type ConfigSection,
} from '../../../src/kernel/config/index.js';
import { configErrorOf, configRejectionOf } from './config-errors.js';

const responseCache = {
  key: 'response_cache',
  plugin: 'response-cache',
  schema: z.strictObject({
    enabled: z.boolean().default(false),
    fallback_ttl: duration({ min: '1s' }).prefault('30s'),
  }),
} satisfies ConfigSection;

describe('loading a config file', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-config-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads YAML, applies the environment and returns core keys and plugin sections apart', async () => {
    const file = join(dir, 'router.config.yaml');
    await writeFile(file, 'version: "1"\nlisten_addr: "localhost:4000"\nresponse_cache:\n  enabled: true\n');
    const config = await loadConfigFile(file, { env: { RESPONSE_CACHE_FALLBACK_TTL: '2m' }, sections: [responseCache] });
    expect(config.core.listen_addr).toBe('localhost:4000');
    expect(config.sections).toEqual({ response_cache: { enabled: true, fallback_ttl: 120_000 } });
    expect(readSection(config, responseCache)?.fallback_ttl).toBe(120_000);
  });

  it('reports a missing file with the path it looked for', async () => {
    const file = join(dir, 'nope.yaml');
    const error = await configRejectionOf(() => loadConfigFile(file, { env: {} }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe(`Invalid configuration in ${file}:\n  file not found (looked for ${file})`);
  });

  it('reports a directory given instead of a file', async () => {
    const error = await configRejectionOf(() => loadConfigFile(dir, { env: {} }));
    expect(error.issues[0]?.message).toMatch(/^is a directory, not a file/);
  });

  it('treats an empty file as an empty mapping, which then lacks version', async () => {
    const file = join(dir, 'empty.yaml');
    await writeFile(file, '');
    const error = await configRejectionOf(() => loadConfigFile(file, { env: {} }));
    expect(error.issues).toEqual([{ path: 'version', message: 'is required; start the file with version: "1"' }]);
  });
});

describe('YAML text', () => {
  it('reports a YAML syntax error with its line and column', () => {
    const error = configErrorOf(() => parseConfigText('version: "1"\nlisten_addr: a: b\n', { file: 'router.config.yaml', env: {} }));
    expect(error.message).toBe('Invalid configuration in router.config.yaml:\n  YAML syntax error at line 2, column 14: Nested mappings are not allowed in compact mappings');
  });

  it('reports a duplicated key as a YAML error', () => {
    const error = configErrorOf(() => parseConfigText('version: "1"\nversion: "1"\n', { env: {} }));
    expect(error.issues[0]?.message).toMatch(/^YAML syntax error at line 2, column 1: Map keys must be unique/);
  });

  it('reads YAML booleans strictly, so yes stays a string and is refused', () => {
    const error = configErrorOf(() => parseConfigText('version: "1"\nplayground:\n  enabled: yes\n', { env: {} }));
    expect(error.issues).toEqual([{ path: 'playground.enabled', message: 'expected true or false, got "yes"', line: 3 }]);
  });

  it('names the line of each bad or unknown key', () => {
    const text = ['version: "1"', 'cors:', '  enabled: true', '  allow_origin: ["*"]', 'engine:', '  execution_plan_cache_size: -1', ''].join('\n');
    const error = configErrorOf(() => parseConfigText(text, { file: 'router.config.yaml', env: {} }));
    expect(error.message).toBe(
      ['Invalid configuration in router.config.yaml:', '  cors: unknown key "allow_origin" (line 4)', '  engine.execution_plan_cache_size: must be at least 1 (line 6)'].join('\n'),
    );
  });

  it('refuses a file whose top level is a list', () => {
    const error = configErrorOf(() => parseConfigText('- version\n', { env: {} }));
    expect(error.issues).toEqual([{ path: '', message: 'expected a mapping of config keys at the top level, got a list' }]);
  });
});

describe('ConfigError', () => {
  it('is a RouterError with code CONFIG_INVALID listing one issue per line without a stack trace', () => {
    const error = configErrorOf(() => parseConfig({ version: '1', listen_addr: 'x', log_level: 'loud', extra: 1 }, { env: {} }));
    expect(error).toBeInstanceOf(RouterError);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message.split('\n')).toEqual([
      'Invalid configuration:',
      '  listen_addr: must be host:port or :port (for example localhost:3002), got "x"',
      '  log_level: must be one of trace, debug, info, warn, error, fatal, silent; got "loud"',
      '  unknown key "extra"',
    ]);
    expect(error.message).not.toMatch(/\bat .+:\d+:\d+/);
  });

  it('names the plugin owning a section in its lines', () => {
    const error = configErrorOf(() => parseConfig({ version: '1', response_cache: { fallback_ttl: '500ms', ttl: 1 } }, { env: {}, sections: [responseCache] }));
    expect(error.message.split('\n').slice(1)).toEqual([
      '  [response-cache] response_cache.fallback_ttl: must be at least 1s',
      '  [response-cache] response_cache: unknown key "ttl"',
    ]);
  });
});

describe('plugin sections', () => {
  it('leaves out a section the file does not mention', () => {
    const config = parseConfig({ version: '1' }, { env: {}, sections: [responseCache] });
    expect(config.sections).toEqual({});
    expect(readSection(config, responseCache)).toBeUndefined();
  });

  it('refuses a section key when no plugin declared it', () => {
    const error = configErrorOf(() => parseConfig({ version: '1', response_cache: { enabled: true } }, { env: {} }));
    expect(error.issues).toEqual([{ path: '', message: 'unknown key "response_cache"' }]);
  });

  it('refuses two sections with the same key, or a section named like a core key', () => {
    expect(() => buildConfigSchema([responseCache, responseCache])).toThrow(/config section "response_cache" is declared twice/);
    expect(() => buildConfigSchema([{ key: 'cors', schema: z.strictObject({}) }])).toThrow(/clashes with a core key/);
    expect(() => buildConfigSchema([{ key: 'ResponseCache', schema: z.strictObject({}) }])).toThrow(/must be snake_case/);
  });

  it('validates third-party plugin options with the plugin path in each issue', () => {
    const schema = z.strictObject({ interval: duration().prefault('10s'), level: z.int() });
    expect(parseConfigValue(schema, { level: 2 }, { at: ['plugins', 0, 'options'] })).toEqual({ interval: 10_000, level: 2 });
    const error = configErrorOf(() => parseConfigValue(schema, { level: 'high', colour: 'red' }, { at: ['plugins', 1, 'options'], plugin: 'audit' }));
    expect(error.message.split('\n').slice(1)).toEqual(['  [audit] plugins[1].options.level: expected a number, got "high"', '  [audit] plugins[1].options: unknown key "colour"']);
  });
});
