import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { builtinSections } from '../../src/cli/builtin-plugins.js';
import { ConfigError, parseConfigText, type LoadedConfig } from '../../src/kernel/config/index.js';
import { expectPrototypeUntouched, pollutingKeys } from './prototype.js';

const sections = builtinSections.map((section) => ({ key: section.key, schema: section.schema, plugin: section.plugin }));

/** Key paths of router.config.yaml, core and built-in sections. */
const paths = fc.constantFrom(
  ['listen_addr'],
  ['log_level'],
  ['execution_config', 'file', 'path'],
  ['execution_config', 'file', 'watch'],
  ['playground', 'enabled'],
  ['introspection', 'enabled'],
  ['limits', 'max_request_body'],
  ['limits', 'max_depth'],
  ['traffic_shaping', 'all', 'request_timeout'],
  ['traffic_shaping', 'subgraphs', 'products', 'retry', 'max_attempts'],
  ['headers', 'all', 'request'],
  ['cors', 'allow_origins'],
  ['storage_providers', 'sharedstore'],
  ['response_cache', 'enabled'],
  ['response_cache', 'fallback_ttl'],
  ['response_cache', 'storage'],
  ['response_cache', 'invalidation', 'endpoint', 'shared_key'],
  ['persisted_operations', 'manifest', 'poll_interval'],
  ['persisted_operations', 'storage'],
  ['connect_rpc', 'server', 'listen_addr'],
  ['profiler', 'upload_interval'],
  ['profiler', 'tags'],
  ['plugins'],
);

/** Values of every YAML kind, and the edge cases of durations, sizes and addresses. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '10s',
    '0s',
    '-1s',
    '1e9h',
    '1m30s',
    '500ms',
    '2h',
    '1.5s',
    '1MB',
    '64MiB',
    '0B',
    '-1MB',
    '99999999999999999999TB',
    'localhost:3002',
    ':0',
    '[::1]:99999',
    'host:port',
    '',
    'info',
    'nope',
    '__proto__',
  ),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(fc.oneof(pollutingKeys, fc.string({ maxLength: 8 })), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

/** A YAML document setting a few keys; JSON is YAML, so each value is written as JSON. */
const document = fc.array(fc.tuple(paths, value), { maxLength: 6 }).map((entries) => {
  const lines = ['version: "1"'];
  for (const [path, v] of entries) {
    path.forEach((key, depth) => lines.push(`${'  '.repeat(depth)}${key}:${depth === path.length - 1 ? ` ${JSON.stringify(v) ?? 'null'}` : ''}`));
  }
  return lines.join('\n');
});

/** Texts that attack the YAML parser itself: aliases that multiply, tags, deep nesting, duplicate keys, bytes. */
const hostileYaml = fc.oneof(
  fc.constant(
    [
      'version: "1"',
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n'),
  ),
  fc.constantFrom(
    'version: !!js/function "function(){}"',
    'version: "1"\nlisten_addr: !!binary aGVsbG8=',
    'version: "1"\nversion: "1"',
    `version: "1"\nlimits: ${'['.repeat(5000)}`,
    '<<: {version: "1"}',
    'version: "1"\n__proto__: {polluted: yes}',
    '\u0000\ufeff',
  ),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

function parse(text: string): LoadedConfig | ConfigError {
  try {
    return parseConfigText(text, { env: {}, sections, file: 'router.config.yaml' });
  } catch (error) {
    // Anything but a ConfigError would reach the user as a stack trace.
    expect(error, text.slice(0, 300)).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
}

describe('fuzzing router.config.yaml', () => {
  it('accepts a file or refuses it with a ConfigError whose every line names a key or the file', () => {
    fc.assert(
      fc.property(fc.oneof(document, hostileYaml), (text) => {
        const outcome = parse(text);
        if (outcome instanceof ConfigError) {
          expect(outcome.issues.length).toBeGreaterThan(0);
          for (const issue of outcome.issues) expect(issue.message).not.toMatch(/\n\s+at /);
          expect(outcome.message).toMatch(/^Invalid configuration in router\.config\.yaml/);
        } else {
          expect(outcome.core.version).toBe('1');
        }
        expectPrototypeUntouched();
      }),
      { numRuns: 400 },
    );
  });

  it('takes environment overrides of any text the same way', () => {
    const variables = fc.constantFrom(
      'LISTEN_ADDR',
      'LOG_LEVEL',
      'LIMITS_MAX_REQUEST_BODY',
      'TRAFFIC_SHAPING_ALL_REQUEST_TIMEOUT',
      'RESPONSE_CACHE_FALLBACK_TTL',
      'RESPONSE_CACHE_ENABLED',
      'PROFILER_TAGS',
      'CORS_ALLOW_ORIGINS',
      'PLAYGROUND_ENABLED',
    );
    fc.assert(
      fc.property(fc.dictionary(variables, fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('k=v,k2=v2', '=,=', 'true', 'yes', '1', '-5s', '1e400'))), (env) => {
        try {
          parseConfigText('version: "1"', { env, sections });
        } catch (error) {
          expect(error, JSON.stringify(env)).toBeInstanceOf(ConfigError);
          expect((error as ConfigError).issues.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
