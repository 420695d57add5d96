/**
 * Where `switchyard router` reads its graph: `--supergraph` and
 * `execution_config.file.path` take a path, a `file:` URL or an http(s)
 * URL (docs/execution-config.md). A `file:` URL was taken for a relative
 * path ("<cwd>/file:/abs/x.graphql: not found").
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/kernel/config/config-error.js';
import { loadRouterSetup } from '../../src/setup/index.js';

let dir = '';
let other = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-graph-location-'));
  other = await mkdtemp(join(tmpdir(), 'switchyard-graph-cwd-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(other, { recursive: true, force: true });
});

async function configWith(path: string): Promise<string> {
  const configPath = join(dir, `router-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(configPath, `version: "1"\nexecution_config:\n  file:\n    path: ${JSON.stringify(path)}\n`);
  return configPath;
}

describe('the graph location of switchyard router', () => {
  it('reads a file: URL as the file it names, from --supergraph and from the config file', async () => {
    const file = join(dir, 'super graph.graphql');
    const url = pathToFileURL(file).href;
    expect(url).toContain('%20');
    expect((await loadRouterSetup({ supergraph: url, cwd: other, env: {} })).graph).toBe(file);
    expect((await loadRouterSetup({ configPath: await configWith(url), cwd: other, env: {} })).graph).toBe(file);
    // URL schemes are case-insensitive (RFC 3986).
    expect((await loadRouterSetup({ supergraph: url.replace('file:', 'FILE:'), cwd: other, env: {} })).graph).toBe(file);
  });

  it('reads a relative path from the working directory for --supergraph and from the config file folder for the file', async () => {
    expect((await loadRouterSetup({ supergraph: 'g.graphql', cwd: other, env: {} })).graph).toBe(join(other, 'g.graphql'));
    expect((await loadRouterSetup({ configPath: await configWith('g.graphql'), cwd: other, env: {} })).graph).toBe(join(dir, 'g.graphql'));
  });

  it('keeps http(s) URLs as they are', async () => {
    expect((await loadRouterSetup({ supergraph: 'HTTPS://graphs.example/super.graphql', cwd: other, env: {} })).graph).toBe('HTTPS://graphs.example/super.graphql');
  });

  it('refuses a file: URL of another host with the key it came from', async () => {
    const thrown = await loadRouterSetup({ supergraph: 'file://fileserver/share/super.graphql', cwd: other, env: {} }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).issues[0]).toMatchObject({
      path: '--supergraph',
      message: expect.stringContaining('"file://fileserver/share/super.graphql" is not a local file URL'),
    });
  });
});
