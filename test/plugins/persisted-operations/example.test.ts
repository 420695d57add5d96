/**
 * examples/persisted-operations, run as its README walks through it: the real
 * `switchyard` command pushes an Apollo manifest and a Relay map, a real
 * router process serves them in manifest mode, requests go by hash over
 * HTTP, and a second push is picked up without a restart.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startExampleSubgraphs } from '../../../examples/persisted-operations/subgraphs.js';
import type { TestSubgraph } from '../../../src/testing/index.js';
import { freePort, runCli, spawnCli } from '../../cli/run-cli.js';
import { tempDir } from '../../operations/support/operations.js';

const example = fileURLToPath(new URL('../../../examples/persisted-operations/', import.meta.url));
const ids = {
  topProducts: '3cc6fde1b66f448e838598b269c70a775e1b43af60805c7b0b415a5bc763fae3',
  productReviews: '19d10fa2926ff94711bbad72073d8beaa5852bea27ef1256aa6ec02fe0b34692',
  stockCheck: '6c73789bd3e02aa47f3adb1dbb4d3f19932a2bf84af6f8ddb78401beaa326320',
  relayViewer: '89cfd21c2dccc7dea5bbd36b51dd1714',
};
const NOT_FOUND_BODY = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };

let dir: { path: string; remove(): Promise<void> };
let subgraphs: TestSubgraph[] = [];
let router: ReturnType<typeof spawnCli> | undefined;
let url: string;
let readme: string;

beforeAll(async () => {
  dir = await tempDir();
  readme = await readFile(join(example, 'README.md'), 'utf8');
  subgraphs = await startExampleSubgraphs(0, join(dir.path, 'router.execution.config.json'));
}, 60_000);

afterAll(async () => {
  if (router && router.exitCode === null) {
    router.kill('SIGTERM');
    await router.exited;
  }
  await Promise.all(subgraphs.map((subgraph) => subgraph.close()));
  await dir?.remove();
});

async function graphql(body: unknown): Promise<{ status: number; cacheControl: string | null; body: unknown }> {
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, cacheControl: response.headers.get('cache-control'), body: await response.json() };
}

const byHash = (sha256Hash: string, variables?: Record<string, unknown>) => ({ extensions: { persistedQuery: { version: 1, sha256Hash } }, ...(variables ? { variables } : {}) });

describe('the persisted-operations example', { timeout: 120_000 }, () => {
  it("pushes the web app's Apollo manifest and the iOS app's Relay map, as the README shows", async () => {
    const web = await runCli(['operations', 'push', 'default', '-c', 'web', '-f', join(example, 'clients/web/persisted-query-manifest.json')], { cwd: dir.path });
    expect(web).toMatchObject({ code: 0, stderr: '' });
    expect(readme).toContain(web.stdout);
    const ios = await runCli(['operations', 'push', 'default', '-c', 'ios', '-f', join(example, 'clients/ios/queries.json')], { cwd: dir.path });
    expect(ios.stdout).toBe(
      'pushed operation 4829b79dc5d3f17e0cf0f2e2ef4a0855a59916dfdd63af2336ae3d44f13f84f4 (created)\n' +
        'pushed operation 5cc4daba7b2a5fa74f05062a59a05de9f8190a393003d1e0f49e8223ac6be514 (created)\n' +
        'pushed 2 operations: 2 created, 0 up to date\n',
    );
  });

  it("starts the router in manifest mode with the example's config", async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    router = spawnCli(['router', '-c', join(example, 'router.config.yaml'), '--supergraph', join(dir.path, 'router.execution.config.json'), '--listen-addr', `127.0.0.1:${port}`], {
      cwd: dir.path,
      env: { PERSISTED_OPERATIONS_MANIFEST_POLL_INTERVAL: '100ms', PERSISTED_OPERATIONS_MANIFEST_POLL_JITTER: '0s' },
    });
    await vi.waitFor(() => expect(router!.output().stdout).toContain('"msg":"Router listening"'), { timeout: 60_000, interval: 100 });
    expect(router.output().stdout).toMatch(/"operations":4,"msg":"Persisted operations manifest loaded"/);
  });

  it('runs operations by hash and by Relay doc_id, and refuses what was not pushed', async () => {
    expect(await graphql(byHash(ids.topProducts, { first: 2 }))).toEqual({
      status: 200,
      cacheControl: null,
      body: {
        data: {
          topProducts: [
            { upc: 'p1', name: 'Table', price: 899 },
            { upc: 'p2', name: 'Couch', price: 1299 },
          ],
        },
      },
    });
    expect((await graphql({ doc_id: ids.relayViewer })).body).toEqual({ data: { me: { id: 'u1', name: 'Ada Lovelace', username: '@ada' } } });
    expect(await graphql(byHash(ids.stockCheck))).toEqual({ status: 200, cacheControl: 'private, no-cache, must-revalidate', body: NOT_FOUND_BODY });
    const freeForm = await graphql({ query: '{ users { name } }' });
    expect(freeForm.status).toBe(403);
    expect(freeForm.body).toEqual({
      errors: [{ message: 'The operation is not registered: only persisted operations may run on this router.', extensions: { code: 'QUERY_NOT_IN_SAFELIST' } }],
    });
    await vi.waitFor(() => expect(router!.output().stdout).toContain('"query":"{ users { name } }","msg":"Unknown operation: not a registered persisted operation"'));
  });

  it("picks up the next release's push, then a deletion, without a restart", async () => {
    const next = await runCli(['operations', 'push', 'default', '-c', 'web', '-f', join(example, 'clients/web/persisted-query-manifest.next.json')], { cwd: dir.path });
    expect(readme).toContain(next.stdout);
    await vi.waitFor(async () => expect((await graphql(byHash(ids.stockCheck))).body).toMatchObject({ data: { topProducts: expect.any(Array) } }), {
      timeout: 10_000,
      interval: 50,
    });
    const deleted = await runCli(['operations', 'delete', 'default', '-c', 'web', ids.productReviews], { cwd: dir.path });
    expect(deleted.stdout).toBe(`deleted operation ${ids.productReviews}\n`);
    await vi.waitFor(async () => expect((await graphql(byHash(ids.productReviews, { upc: 'p1' }))).body).toEqual(NOT_FOUND_BODY), { timeout: 10_000, interval: 50 });
    expect(router!.exitCode).toBeNull();
  });
});
