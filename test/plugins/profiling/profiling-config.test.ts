import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSubgraphs } from '../../../examples/demo/subgraphs.js';
import { ConfigError, RouterError } from '../../../src/index.js';
import { loadRouterSetup } from '../../../src/setup/index.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { useProfiling } from '../../../plugins/profiling/index.js';
import { captureLogs, startIngestServer, waitFor } from './helpers.js';

let dir: string;
let subgraphs: TestSubgraph[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-profiling-'));
  subgraphs = await Promise.all(demoSubgraphs.map((subgraph) => startSubgraph(subgraph)));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await Promise.all(subgraphs.map((subgraph) => subgraph.close()));
});

/** Loads `router.config.yaml` text with the given environment, as `switchyard router -c` does. */
async function setupFrom(yaml: string, env: NodeJS.ProcessEnv = {}) {
  const path = join(dir, `router-${Math.random().toString(36).slice(2)}.config.yaml`);
  await writeFile(path, yaml);
  return loadRouterSetup({ configPath: path, env });
}

/** A config file whose `profiler` section holds these lines. */
function profilerYaml(...lines: string[]): string {
  return ['version: "1"', 'profiler:', ...lines, ''].join('\n');
}

/** Section lines (from line 3) whose values are each valid but break rules across keys. */
const CROSS_KEY_PROBLEMS = [
  '  enabled: true',
  '  server_address: https://user:hunter2@profiles.example.com',
  '  basic_auth:',
  '    username: tenant',
  '  tags:',
  '    hostname: mine',
];

async function problemsOf(yaml: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const error = await setupFrom(yaml, env).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message
    .split('\n')
    .slice(1)
    .map((line) => line.trim());
}

describe('switching profiling on from the config file and the environment', () => {
  it('adds no profiling plugin without PPROF_ADDR or profiler.enabled', async () => {
    expect((await setupFrom('version: "1"\n')).plugins.map((plugin) => plugin.name)).toEqual([]);
    const disabled = await setupFrom('version: "1"\nprofiler:\n  enabled: false\n  server_address: http://127.0.0.1:1\n');
    expect(disabled.plugins.map((plugin) => plugin.name)).toEqual([]);
  });

  it('serves the profiling endpoints when PPROF_ADDR is set, even without a profiler section, on loopback for a bare port', async () => {
    const setup = await setupFrom('version: "1"\n', { PPROF_ADDR: ':0' });
    expect(setup.plugins.map((plugin) => plugin.name)).toEqual(['profiling']);
    const { logger, lines } = captureLogs();
    const router = await startTestRouter({ subgraphs, plugins: setup.plugins, logger });
    try {
      const warning = lines.find((line) => line.msg.startsWith('Profiling endpoints exposed'));
      expect(warning?.listen_addr).toMatch(/^127\.0\.0\.1:\d+$/);
      const index = await fetch(`http://${String(warning?.listen_addr)}/debug/pprof/`);
      expect(index.status).toBe(200);
      // Continuous profiling stays off.
      expect(lines.some((line) => line.msg === 'Continuous profiling enabled')).toBe(false);
    } finally {
      await router.close();
    }
  });

  it('takes every profiler key from PROFILER_* variables', async () => {
    const server = await startIngestServer();
    const env = {
      PROFILER_ENABLED: 'true',
      PROFILER_SERVER_ADDRESS: server.url,
      PROFILER_BASIC_AUTH_USERNAME: 'tenant-9',
      PROFILER_BASIC_AUTH_PASSWORD: 'env-secret-token',
      PROFILER_TAGS: 'team=graph,region=us',
      PROFILER_APPLICATION_NAME: 'env.router',
      PROFILER_UPLOAD_INTERVAL: '300ms',
    };
    const setup = await setupFrom('version: "1"\n', env);
    expect(setup.plugins.map((plugin) => plugin.name)).toEqual(['profiling']);
    const { logger, lines } = captureLogs();
    const router = await startTestRouter({ subgraphs, plugins: setup.plugins, logger });
    try {
      await waitFor(() => server.pushes.length > 0, 5000, 'a push');
      const push = server.pushes[0];
      expect(push?.authorization).toBe(`Basic ${Buffer.from('tenant-9:env-secret-token').toString('base64')}`);
      expect(push?.query.get('name')).toMatch(/^env\.router\{hostname=[^,]+,region=us,team=graph,version=[^,]+\}$/);
      expect(lines.find((line) => line.msg === 'Continuous profiling enabled')?.upload_interval).toBe('300ms');
      expect(JSON.stringify(lines)).not.toContain('env-secret-token');
    } finally {
      await router.close();
      await server.close();
    }
  });

  it('applies the documented defaults', () => {
    const options = useProfiling.optionsSchema.parse({});
    expect(options).toEqual({ enabled: false, basic_auth: {}, tags: {}, application_name: 'io.switchyard.router', upload_interval: 15_000 });
  });

  it('stops startup with the key path and the reason for each bad profiler value', async () => {
    expect(await problemsOf('version: "1"\nprofiler:\n  enabled: true\n')).toEqual(['[profiling] profiler.server_address: is required when profiler.enabled is true']);
    const badValues = ['    "bad-name": x', '    team: "a,b"', '  application_name: "my app"', '  upload_interval: 10', '  unknown_key: true'];
    expect(await problemsOf(profilerYaml(...CROSS_KEY_PROBLEMS, ...badValues))).toEqual([
      '[profiling] profiler.tags.team: tag values must be non-empty, without spaces or any of { } , = (line 10)',
      '[profiling] profiler.tags.bad-name: tag names are letters, digits and "_", not starting with a digit (line 9)',
      '[profiling] profiler.application_name: must be non-empty, without spaces or any of { } , = (line 11)',
      '[profiling] profiler.upload_interval: expected a duration with a unit, such as "30s", got the number 10 (line 12)',
      '[profiling] profiler: unknown key "unknown_key" (line 13)',
    ]);
    expect(await problemsOf(profilerYaml(...CROSS_KEY_PROBLEMS, '  upload_interval: 50ms'))).toEqual(['[profiling] profiler.upload_interval: must be at least 100ms (line 9)']);
  });

  it('checks the profiler keys against each other once every value is valid', async () => {
    const problems = await problemsOf(profilerYaml(...CROSS_KEY_PROBLEMS));
    expect(problems).toEqual([
      '[profiling] profiler.server_address: must not carry credentials; set profiler.basic_auth.username and profiler.basic_auth.password instead (line 4)',
      '[profiling] profiler.basic_auth.password: is required when the other basic_auth key is set',
      '[profiling] profiler.tags.hostname: is attached automatically and cannot be set (line 8)',
    ]);
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('names PROFILER_* variables and PPROF_ADDR in their errors', async () => {
    expect(await problemsOf('version: "1"\n', { PROFILER_ENABLED: 'yes' })).toEqual(['PROFILER_ENABLED (profiler.enabled): expected true or false, got "yes"']);
    expect(await problemsOf('version: "1"\n', { PROFILER_UPLOAD_INTERVAL: 'soon' })).toEqual([
      '[profiling] PROFILER_UPLOAD_INTERVAL (profiler.upload_interval): "soon" is not a duration; use a number with a unit (h, m, s, ms), for example 500ms, 30s, 1m30s or 2h',
    ]);
    expect(await problemsOf('version: "1"\n', { PPROF_ADDR: 'localhost' })).toEqual([
      '[profiling] PPROF_ADDR: must be host:port or :port (for example localhost:3002), got "localhost"',
    ]);
  });

  it('refuses bad options given in code, naming the profiler key', () => {
    expect(() => useProfiling({ pprof_addr: 'nowhere' })).toThrow(ConfigError);
    expect(() => useProfiling({ enabled: true })).toThrow('profiler.server_address: is required when profiler.enabled is true');
  });

  it('stops startup with CONFIG_INVALID when the profiling listener cannot bind its address', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const error = await startTestRouter({ subgraphs, plugins: [useProfiling({ pprof_addr: `127.0.0.1:${port}` })] }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(RouterError);
      expect((error as RouterError).code).toBe('CONFIG_INVALID');
      expect((error as RouterError).message).toBe(
        `[profiling] cannot listen on 127.0.0.1:${port} for the profiling endpoints: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
      );
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('warns when the plugin is registered in code with neither pprof_addr nor enabled, and opens nothing', async () => {
    const { logger, lines } = captureLogs();
    const router = await startTestRouter({ subgraphs, plugins: [useProfiling({})], logger });
    try {
      expect(lines.filter((line) => line.plugin === 'profiling')).toEqual([
        {
          level: 'warn',
          time: expect.any(Number),
          plugin: 'profiling',
          msg: 'Profiling plugin registered with nothing to do: set pprof_addr (PPROF_ADDR) or enabled',
        },
      ]);
    } finally {
      await router.close();
    }
  });
});
