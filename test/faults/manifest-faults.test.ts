import { open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usePersistedOperations } from '../../plugins/persisted-operations/index.js';
import { openOperationsStore, sha256Hex } from '../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { startRedis } from '../support/redis.js';
import { graphqlInput, tempDir } from '../operations/support/operations.js';
import { byHash, collectingLogger, prices, startProducts, topProducts, topProductsData, type LogLine } from '../plugins/persisted-operations/fixtures.js';
import { eventually, problems, sleep, startLoad } from './load-loop.js';

vi.setConfig({ testTimeout: 30_000 });

let products: TestSubgraph;
let live: Awaited<ReturnType<typeof tempDir>>;
let staging: Awaited<ReturnType<typeof tempDir>>;
let router: TestRouter;
let lines: LogLine[];

const INVALID = 'Persisted operations manifest is invalid; keeping the previous one';
const LOADED = 'Persisted operations manifest loaded';

beforeAll(async () => {
  [products, live, staging] = await Promise.all([startProducts(), tempDir(), tempDir()]);
  await (await openOperationsStore({ provider: 'file', path: live.path })).push('default', 'web', [graphqlInput(topProducts)]);
  const logs = collectingLogger();
  lines = logs.lines;
  router = await startTestRouter({
    subgraphs: [products],
    logger: logs.logger,
    plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: live.path }, manifest: { enabled: true, poll_interval: '50ms', poll_jitter: '10ms' } })],
  });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([products?.close(), live?.remove(), staging?.remove()]);
});

async function sendTopProducts(): Promise<string | undefined> {
  const response = await router.query({ extensions: byHash(sha256Hex(topProducts)) });
  const body = JSON.stringify(response.body);
  return response.status === 200 && body === JSON.stringify({ data: topProductsData }) ? undefined : `${response.status} ${body.slice(0, 300)}`;
}

describe('a manifest replaced by a truncated file while the router polls it', () => {
  it('keeps serving the previous manifest, logs the error once, and loads the file once it is complete', async () => {
    // The next revision, built aside: the operation already served plus one more.
    await (await openOperationsStore({ provider: 'file', path: staging.path })).push('default', 'web', [graphqlInput(topProducts), graphqlInput(prices)]);
    const next = await readFile(join(staging.path, 'default', 'manifest.json'));
    const nextRevision = (JSON.parse(next.toString('utf8')) as { revision: string }).revision;
    const load = startLoad(sendTopProducts);
    await sleep(200);

    // A writer that is not atomic: half the file, a pause across several polls, then the rest.
    // The half file is renamed into place, so no poll can catch the empty file that opening
    // with truncation would show for an instant (a second, different invalid state).
    const manifest = join(live.path, 'default', 'manifest.json');
    const half = `${manifest}.half`;
    await writeFile(half, next.subarray(0, Math.floor(next.length / 2)));
    await rename(half, manifest);
    const file = await open(manifest, 'a');
    try {
      await eventually(() => lines.some((line) => line.msg === INVALID), 'the invalid manifest to be logged', 5000);
      await sleep(300);
      const notYet = await router.query({ extensions: byHash(sha256Hex(prices)) });
      expect(notYet.body).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
      await file.write(next.subarray(Math.floor(next.length / 2)));
    } finally {
      await file.close();
    }

    await eventually(() => lines.some((line) => line.msg === LOADED && line.revision === nextRevision), 'the completed manifest to load', 5000);
    expect((await router.query({ extensions: byHash(sha256Hex(prices)) })).body).toEqual({ data: { topProducts: [{ price: 899 }, { price: 1299 }] } });
    const samples = await load.stop();

    expect(problems(samples)).toEqual([]);
    expect(samples.length).toBeGreaterThan(50);
    const invalid = lines.filter((line) => line.msg === INVALID);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ level: 'error', plugin: 'persisted-operations', graph: 'default', reason: expect.stringContaining('not JSON') });
  });

  it('keeps serving while the Redis holding the manifest is killed, and loads a new revision once it is back', async () => {
    const redis = await startRedis();
    const logs = collectingLogger();
    let served: TestRouter | undefined;
    try {
      const store = await openOperationsStore({ provider: 'redis', urls: [redis.url] });
      await store.push('default', 'web', [graphqlInput(topProducts)]);
      await store.close();
      served = await startTestRouter({
        subgraphs: [products],
        logger: logs.logger,
        config: { storage_providers: { sharedstore: [{ id: 'ops', urls: [redis.url] }] } },
        plugins: [
          usePersistedOperations({
            enabled: true,
            storage: { provider: 'sharedstore', provider_id: 'ops' },
            manifest: { enabled: true, poll_interval: '50ms', poll_jitter: '10ms' },
          }),
        ],
      });
      const router = served;
      const load = startLoad(async () => {
        const response = await router.query({ extensions: byHash(sha256Hex(topProducts)) });
        const body = JSON.stringify(response.body);
        return response.status === 200 && body === JSON.stringify({ data: topProductsData }) ? undefined : `${response.status} ${body.slice(0, 300)}`;
      });
      try {
        await sleep(200);
        await redis.kill();
        await eventually(
          () => logs.lines.some((line) => line.msg === 'Persisted operations manifest could not be read; keeping the previous one'),
          'the failed poll to be logged',
          5000,
        );
        await sleep(500);
        // Back empty, as a restarted Redis without persistence is: the operations are pushed again, with one more.
        await redis.restart();
        const again = await openOperationsStore({ provider: 'redis', urls: [redis.url] });
        await again.push('default', 'web', [graphqlInput(topProducts), graphqlInput(prices)]);
        await again.close();
        await eventually(
          async () =>
            JSON.stringify((await router.query({ extensions: byHash(sha256Hex(prices)) })).body) === JSON.stringify({ data: { topProducts: [{ price: 899 }, { price: 1299 }] } }),
          'the new revision after the restart',
          10_000,
        );
        // Polled every 50 ms through the outage, logged once when it began and once when it ended.
        expect(logs.lines.filter((line) => line.msg === 'Persisted operations manifest could not be read; keeping the previous one')).toHaveLength(1);
        expect(logs.lines.filter((line) => line.msg === 'Persisted operations manifest can be read again')).toHaveLength(1);
      } finally {
        await load.stop();
      }
      expect(problems(load.samples)).toEqual([]);
      expect(load.samples.length).toBeGreaterThan(50);
    } finally {
      await served?.close();
      await redis.stop();
    }
  });
});
