import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifest, sha256Hex } from '../../src/operations/index.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { type HarnessRun, runHarness } from '../support/run-harness.js';
import { startStaticHost } from './support/static-server.js';
import { apolloManifest, priceQuery, productQuery, tempDir, topProductsQuery } from './support/operations.js';

const HARNESS = fileURLToPath(new URL('./support/cli-harness.ts', import.meta.url));

function switchyard(args: string[], { cwd, env = {} }: { cwd: string; env?: Record<string, string> }): Promise<HarnessRun> {
  const { SWITCHYARD_OPERATIONS_STORE: _ignored, ...inherited } = process.env;
  return runHarness(HARNESS, args, { cwd, env: { ...inherited, ...env } });
}

/** A project folder with an Apollo manifest, a Relay map and a .graphql file. */
async function project(onTestFinished: (fn: () => Promise<void>) => void): Promise<string> {
  const dir = await tempDir();
  onTestFinished(() => dir.remove());
  await writeFile(join(dir.path, 'apollo.json'), apolloManifest([topProductsQuery, productQuery]));
  await writeFile(join(dir.path, 'relay.json'), JSON.stringify({ '0a1b2c3d4e5f': priceQuery }));
  await writeFile(join(dir.path, 'prices.graphql'), priceQuery);
  return dir.path;
}

async function manifestIn(dir: string) {
  return parseManifest(await readFile(join(dir, '.switchyard', 'operations', 'default', 'manifest.json'), 'utf8'));
}

const ids = { top: sha256Hex(topProductsQuery), product: sha256Hex(productQuery), price: sha256Hex(priceQuery) };

describe.concurrent('switchyard operations', { timeout: 60_000 }, () => {
  it('pushes an Apollo manifest: one line per operation, then the totals; up to date on the second push', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    const first = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json'], { cwd });
    expect(first).toEqual({
      code: 0,
      stderr: '',
      stdout: `pushed operation ${ids.top} (created)\npushed operation ${ids.product} (created)\npushed 2 operations: 2 created, 0 up to date\n`,
    });
    const second = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json', '-f', 'prices.graphql'], { cwd });
    expect(second.stdout).toBe(
      `pushed operation ${ids.top} (up to date)\npushed operation ${ids.product} (up to date)\npushed operation ${ids.price} (created)\npushed 3 operations: 1 created, 2 up to date\n`,
    );
    expect(Object.keys((await manifestIn(cwd)).operations).sort()).toEqual([ids.top, ids.product, ids.price].sort());
  });

  it('pushes a Relay map and deletes by the Relay id', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    expect((await switchyard(['operations', 'push', 'default', '-c', 'relay', '-f', 'relay.json'], { cwd })).stdout).toBe(
      `pushed operation ${ids.price} (created)\npushed 1 operations: 1 created, 0 up to date\n`,
    );
    expect((await manifestIn(cwd)).aliases).toEqual({ '0a1b2c3d4e5f': ids.price });
    const deleted = await switchyard(['operations', 'delete', 'default', '-c', 'relay', '0a1b2c3d4e5f'], { cwd });
    expect(deleted).toEqual({ code: 0, stderr: '', stdout: `deleted operation ${ids.price}\n` });
    expect((await manifestIn(cwd)).operations).toEqual({});
  });

  it('pushes nothing when one file is invalid, and says why on stderr with exit 1', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    await writeFile(join(cwd, 'broken.graphql'), 'query { topProducts {');
    const run = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json', '-f', 'broken.graphql'], { cwd });
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: broken.graphql: GraphQL syntax error at line 1, column 22: Expected Name, found <EOF>.\nerror: nothing was pushed\n',
    });
    await expect(readFile(join(cwd, '.switchyard', 'operations', 'default', 'manifest.json'))).rejects.toThrow('ENOENT');
  });

  it('lists what a management view shows, as a table or as JSON', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json'], { cwd });
    await switchyard(['operations', 'push', 'default', '-c', 'relay', '-f', 'relay.json'], { cwd });
    const table = await switchyard(['operations', 'list', 'default'], { cwd });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^GRAPH\s+CLIENT\s+ID\s+NAME\s+FIRST PUSHED$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/).slice(0, 4))).toEqual([
      ['default', 'relay', `${ids.price} (alias 0a1b2c3d4e5f)`, 'Prices'],
      ['default', 'web', ids.top, 'TopProducts'],
      ['default', 'web', ids.product, 'Product'],
    ]);
    const json = await switchyard(['operations', 'list', 'default', '-c', 'web', '--format', 'json'], { cwd });
    expect(JSON.parse(json.stdout)).toEqual([
      { graph: 'default', client: 'web', id: ids.top, name: 'TopProducts', type: 'query', aliases: [], firstPushedAt: expect.any(String) },
      { graph: 'default', client: 'web', id: ids.product, name: 'Product', type: 'query', aliases: [], firstPushedAt: expect.any(String) },
    ]);
    expect((await switchyard(['operations', 'list', 'other'], { cwd })).stdout).toBe('no operations registered in graph "other"\n');
  });

  it('reports a push as JSON with --format json', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    const run = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'prices.graphql', '--format', 'json'], { cwd });
    expect(JSON.parse(run.stdout)).toEqual({ graph: 'default', client: 'web', operations: [{ id: ids.price, name: 'Prices', status: 'created' }], created: 1, upToDate: 0 });
  });

  it('exits 1 when deleting an id the client does not have', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    const run = await switchyard(['operations', 'delete', 'default', '-c', 'web', ids.top], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: no operation ${ids.top} is registered for client "web" of graph "default" in ${join(cwd, '.switchyard', 'operations')}\n`);
  });

  it('exits 2 on usage errors: no file, no client, a bad format, an unknown store scheme, an empty graph name', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    const runs = await Promise.all([
      switchyard(['operations', 'push', 'default', '-c', 'web'], { cwd }),
      switchyard(['operations', 'push', 'default', '-f', 'prices.graphql'], { cwd }),
      switchyard(['operations', 'list', 'default', '--format', 'yaml'], { cwd }),
      switchyard(['operations', 'list', 'default', '--store', 'ftp://example.com/ops'], { cwd }),
      switchyard(['operations', 'list', ' '], { cwd }),
    ]);
    expect(runs.map((run) => run.code)).toEqual([2, 2, 2, 2, 2]);
    expect(runs.map((run) => run.stderr.split('\n')[0])).toEqual([
      "error: required option '-f, --file <file>' not specified",
      "error: required option '-c, --client <client>' not specified",
      "error: option '--format <format>' argument 'yaml' is invalid. Allowed choices are text, json.",
      'error: --store: unsupported store "ftp://": use a directory path, redis://host:port[/db] or an http(s):// base URL',
      'error: the graph name is empty',
    ]);
  });

  it('refuses an empty Relay map or Apollo manifest with exit 1, pushing nothing', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    await writeFile(join(cwd, 'empty.json'), '{}');
    await writeFile(join(cwd, 'empty-list.json'), '[]');
    const run = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'empty.json', '-f', 'empty-list.json', '-f', 'prices.graphql'], { cwd });
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: empty.json: holds no operations (an empty Relay query map): nothing to push\n' +
        'error: empty-list.json: holds no operations (an empty Relay query map): nothing to push\n' +
        'error: nothing was pushed\n',
    });
    await expect(readFile(join(cwd, '.switchyard', 'operations', 'default', 'manifest.json'))).rejects.toThrow('ENOENT');
  });

  it('uses the store named by SWITCHYARD_OPERATIONS_STORE (an empty one counts as unset), and --store over it', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'prices.graphql'], { cwd, env: { SWITCHYARD_OPERATIONS_STORE: 'from-env' } });
    await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json', '--store', 'from-flag'], { cwd, env: { SWITCHYARD_OPERATIONS_STORE: 'from-env' } });
    expect(Object.keys(parseManifest(await readFile(join(cwd, 'from-env', 'default', 'manifest.json'), 'utf8')).operations)).toEqual([ids.price]);
    expect(Object.keys(parseManifest(await readFile(join(cwd, 'from-flag', 'default', 'manifest.json'), 'utf8')).operations).sort()).toEqual([ids.top, ids.product].sort());
    await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'prices.graphql'], { cwd, env: { SWITCHYARD_OPERATIONS_STORE: '' } });
    expect(Object.keys((await manifestIn(cwd)).operations)).toEqual([ids.price]);
  });

  it('refuses to push to or delete from an HTTP store, and lists from it', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'prices.graphql'], { cwd });
    const host = await startStaticHost(join(cwd, '.switchyard', 'operations'));
    onTestFinished(() => host.close());
    const message = `error: the operations store at ${host.url} is read-only (an HTTP store); push to a directory or Redis store and serve that instead\n`;
    expect(await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json', '--store', host.url], { cwd })).toEqual({ code: 1, stdout: '', stderr: message });
    expect(await switchyard(['operations', 'delete', 'default', '-c', 'web', ids.price, '--store', host.url], { cwd })).toEqual({ code: 1, stdout: '', stderr: message });
    const listed = await switchyard(['operations', 'list', 'default', '--store', host.url, '--format', 'json'], { cwd });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ client: 'web', id: ids.price })]);
  });

  it('reads an HTTP store whose --store URL carries user:password@ with HTTP Basic authorization; the password never reaches the terminal', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'prices.graphql'], { cwd });
    const password = 's3cr3t/pw@x';
    const host = await startStaticHost(join(cwd, '.switchyard', 'operations'), 'ops', { basicAuth: { user: 'cdn-user', password } });
    onTestFinished(() => host.close());
    // Percent-encoded in the URL, decoded before it is sent.
    const storeWith = (secret: string) => host.url.replace('http://', `http://cdn-user:${encodeURIComponent(secret)}@`);
    const basic = `Basic ${Buffer.from(`cdn-user:${password}`, 'utf8').toString('base64')}`;

    const listed = await switchyard(['operations', 'list', 'default', '--store', storeWith(password), '--format', 'json'], { cwd });
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ client: 'web', id: ids.price })]);
    const fromEnv = await switchyard(['operations', 'list', 'default', '--format', 'json'], { cwd, env: { SWITCHYARD_OPERATIONS_STORE: storeWith(password) } });
    expect(fromEnv).toEqual(listed);
    expect(host.requests.length).toBeGreaterThan(0);
    expect(host.requests.every((request) => request.authorization === basic && request.status === 200)).toBe(true);

    const wrong = await switchyard(['operations', 'list', 'default', '--store', storeWith('wr0ng-guess')], { cwd });
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toMatch(new RegExp(`^error: cannot read ${host.url.replace(/[.]/g, '\\.')}/\\S+: HTTP 401\n$`));

    const readOnly = `error: the operations store at ${host.url} is read-only (an HTTP store); push to a directory or Redis store and serve that instead\n`;
    const pushed = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json', '--store', storeWith(password)], { cwd });
    expect(pushed).toEqual({ code: 1, stdout: '', stderr: readOnly });
    const deleted = await switchyard(['operations', 'delete', 'default', '-c', 'web', ids.price, '--store', storeWith(password)], { cwd });
    expect(deleted).toEqual({ code: 1, stdout: '', stderr: readOnly });

    for (const run of [listed, fromEnv, wrong, pushed, deleted]) {
      for (const secret of ['s3cr3t', 'wr0ng-guess', 'cdn-user:']) expect(`${run.stdout}${run.stderr}`).not.toContain(secret);
    }
  });
});

describe('switchyard operations with a Redis store', { timeout: 60_000 }, () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('pushes to and lists from redis://host:port/db', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    const store = `${redis.url}/3`;
    const pushed = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json', '--store', store], { cwd });
    expect(pushed).toMatchObject({ code: 0, stderr: '' });
    expect(pushed.stdout.endsWith('pushed 2 operations: 2 created, 0 up to date\n')).toBe(true);
    const again = await switchyard(['operations', 'push', 'default', '-c', 'web', '-f', 'apollo.json', '--store', store], { cwd });
    expect(again.stdout.endsWith('pushed 2 operations: 0 created, 2 up to date\n')).toBe(true);
    const listed = await switchyard(['operations', 'list', 'default', '--store', store, '--format', 'json'], { cwd });
    expect(JSON.parse(listed.stdout).map((row: { id: string }) => row.id)).toEqual([ids.top, ids.product]);
  });

  it('exits 1 naming the server when Redis cannot be reached', async ({ onTestFinished }) => {
    const cwd = await project(onTestFinished);
    const run = await switchyard(['operations', 'list', 'default', '--store', 'redis://127.0.0.1:1'], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: cannot connect to the operations store at redis:\/\/127\.0\.0\.1:1: /);
  });
});
