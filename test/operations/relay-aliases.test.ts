/**
 * Relay ids (aliases) end to end: what `switchyard operations push` and `delete` do with an id that would
 * name two operations, and what routers over the same store (lookup mode and manifest mode) then serve for
 * it. The rule: an id or alias names one operation in a graph, so a request never runs a text other than
 * the one its client was built with; a push that would break it is refused whole, before anything is written.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usePersistedOperations } from '../../plugins/persisted-operations/index.js';
import { sha256Hex } from '../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { startProducts } from '../plugins/persisted-operations/fixtures.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { type HarnessRun, runHarness } from '../support/run-harness.js';
import { tempDir } from './support/operations.js';

const HARNESS = fileURLToPath(new URL('./support/cli-harness.ts', import.meta.url));

/** Four texts; what a router answers tells which one ran. */
const TEXTS = {
  A: 'query A { topProducts { upc } }',
  B: 'query B { topProducts { name } }',
  C: 'query C { topProducts { price } }',
  D: 'query D { topProducts { upc name } }',
} as const;
type Letter = keyof typeof TEXTS;
const id = (letter: Letter) => sha256Hex(TEXTS[letter]);

let products: TestSubgraph;
let redis: RedisServer;

beforeAll(async () => {
  products = await startProducts();
  redis = await startRedis();
});
afterAll(async () => {
  await products?.close();
  await redis?.stop();
});

function switchyard(args: string[], cwd: string): Promise<HarnessRun> {
  const { SWITCHYARD_OPERATIONS_STORE: _ignored, ...inherited } = process.env;
  return runHarness(HARNESS, ['operations', ...args], { cwd, env: inherited });
}

/** A folder holding the files to push and the store (`store/`). */
interface Project {
  readonly dir: string;
  readonly store: string;
  /** Writes a file into the folder. */
  file(name: string, content: unknown): Promise<string>;
  push(client: string, ...files: string[]): Promise<HarnessRun>;
  delete(client: string, key: string): Promise<HarnessRun>;
  /** Every file of the store with its text (the lock folder aside). */
  snapshot(): Promise<Record<string, string>>;
}

async function project(onTestFinished: (fn: () => Promise<void>) => void): Promise<Project> {
  const folder = await tempDir();
  onTestFinished(() => folder.remove());
  const store = join(folder.path, 'store');
  const run = (args: string[]) => switchyard([...args, '--store', store], folder.path);
  return {
    dir: folder.path,
    store,
    async file(name, content) {
      await writeFile(join(folder.path, name), typeof content === 'string' ? content : JSON.stringify(content));
      return name;
    },
    push: (client, ...files) => run(['push', 'default', '-c', client, ...files.flatMap((file) => ['-f', file])]),
    delete: (client, key) => run(['delete', 'default', '-c', client, key]),
    async snapshot() {
      const files: Record<string, string> = {};
      for (const entry of await readdir(store, { recursive: true, withFileTypes: true }).catch(() => [])) {
        if (!entry.isFile()) continue;
        const path = join(entry.parentPath, entry.name);
        files[relative(store, path)] = await readFile(path, 'utf8');
      }
      return files;
    },
  };
}

/** A router in lookup mode (a short lookup cache) and one in manifest mode (fast polls), both over the project's store. */
async function routers(store: string, onTestFinished: (fn: () => Promise<void>) => void): Promise<{ lookup: TestRouter; manifest: TestRouter }> {
  const storage = { provider: 'file' as const, path: store };
  const lookup = await startTestRouter({
    subgraphs: [products],
    plugins: [usePersistedOperations({ enabled: true, storage, lookup_cache: { ttl: '100ms' } })],
  });
  onTestFinished(() => lookup.close());
  const manifest = await startTestRouter({
    subgraphs: [products],
    plugins: [usePersistedOperations({ enabled: true, storage, manifest: { enabled: true, poll_interval: '20ms', poll_jitter: '10ms' } })],
  });
  onTestFinished(() => manifest.close());
  return { lookup, manifest };
}

/** Which text a router ran for an id (a SHA-256 sent as sha256Hash, anything else as doc_id), or `missing` for PersistedQueryNotFound. */
async function ran(router: TestRouter, client: string, key: string): Promise<Letter | 'missing'> {
  const hex = /^[0-9a-f]{64}$/i.test(key);
  const response = await router.fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'graphql-client-name': client },
    body: JSON.stringify(hex ? { extensions: { persistedQuery: { version: 1, sha256Hash: key } } } : { doc_id: key }),
  });
  const body = (await response.json()) as { data?: { topProducts: Array<Record<string, unknown>> }; errors?: Array<{ extensions?: { code?: string } }> };
  if (body.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') return 'missing';
  const fields = Object.keys(body.data?.topProducts[0] ?? {})
    .sort()
    .join(',');
  const letter = ({ upc: 'A', name: 'B', price: 'C', 'name,upc': 'D' } as const)[fields];
  if (letter === undefined) throw new Error(`unexpected answer ${JSON.stringify(body)}`);
  return letter;
}

/** Waits until both routers answer as expected: lookup mode for the client, manifest mode for any client. */
async function expectServed(
  routerPair: { lookup: TestRouter; manifest: TestRouter },
  client: string,
  key: string,
  expected: { lookup: Letter | 'missing'; manifest: Letter | 'missing' },
) {
  await vi.waitFor(
    async () => {
      expect({ lookup: await ran(routerPair.lookup, client, key), manifest: await ran(routerPair.manifest, client, key) }).toEqual(expected);
    },
    { timeout: 5_000, interval: 20 },
  );
}

describe.concurrent('Relay ids that would name two operations', { timeout: 60_000 }, () => {
  it('(a) refuses a map naming one Relay id twice with different texts, in the array form and as duplicate JSON keys', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    const array = await p.file('array.json', [
      ['R1', TEXTS.A],
      ['R1', TEXTS.B],
    ]);
    // JSON.parse keeps only the last of two equal keys: the map must be read from its text.
    const object = await p.file('object.json', `{"R1": ${JSON.stringify(TEXTS.A)}, "R1": ${JSON.stringify(TEXTS.B)}}`);
    for (const file of [array, object]) {
      expect(await p.push('web', file)).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: ${file}: Relay id "R1" is given twice, for two different texts (operations ${id('A')} and ${id('B')}): a Relay id names one operation\nerror: nothing was pushed\n`,
      });
    }
    expect(await p.snapshot()).toEqual({});
  });

  it('(a) accepts a Relay id given twice for the same text, as one operation', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    const file = await p.file('same.json', `{"R1": ${JSON.stringify(TEXTS.A)}, "R1": ${JSON.stringify(TEXTS.A)}}`);
    expect(await p.push('web', file)).toEqual({ code: 0, stderr: '', stdout: `pushed operation ${id('A')} (created)\npushed 1 operations: 1 created, 0 up to date\n` });
    const pair = await routers(p.store, onTestFinished);
    await expectServed(pair, 'web', 'R1', { lookup: 'A', manifest: 'A' });
  });

  it('(a) refuses one Relay id for two texts in two files of one push', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    const first = await p.file('first.json', { R1: TEXTS.A });
    const second = await p.file('second.json', { R1: TEXTS.B });
    const run = await p.push('web', first, second);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `error: "R1" cannot be an alias of operation ${id('B')} (B) for client "web": it is already an alias of operation ${id('A')} (A) earlier in this push, ` +
        'and an id or alias names one operation in graph "default"; give one of the queries another id\nerror: nothing was pushed\n',
    );
    expect(await p.snapshot()).toEqual({});
  });

  it('(b) refuses a later push mapping a Relay id to another text, for the same client and for another, and writes nothing', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    expect((await p.push('web', await p.file('v1.json', { R1: TEXTS.A }))).code).toBe(0);
    const pair = await routers(p.store, onTestFinished);
    await expectServed(pair, 'web', 'R1', { lookup: 'A', manifest: 'A' });
    const before = await p.snapshot();
    const v2 = await p.file('v2.json', { R1: TEXTS.B });
    for (const client of ['web', 'ios']) {
      expect(await p.push(client, v2)).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `error: "R1" cannot be an alias of operation ${id('B')} (B) for client "${client}": it is already an alias of operation ${id('A')} (A) of client "web", ` +
          `and an id or alias names one operation in graph "default"; delete it first (switchyard operations delete default -c web ${id('A')}) or give the query another id\n` +
          'error: nothing was pushed\n',
      });
    }
    expect(await p.snapshot()).toEqual(before);
    // Every router still runs what web was built with; ios has no R1 of its own (manifest mode ignores the client).
    await expectServed(pair, 'web', 'R1', { lookup: 'A', manifest: 'A' });
    await expectServed(pair, 'ios', 'R1', { lookup: 'missing', manifest: 'A' });
  });

  it('(b) accepts the same Relay id for the same text again (up to date) and for another client (created)', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    const map = await p.file('map.json', { R1: TEXTS.A });
    expect((await p.push('web', map)).stdout).toContain(`pushed operation ${id('A')} (created)`);
    expect((await p.push('web', map)).stdout).toBe(`pushed operation ${id('A')} (up to date)\npushed 1 operations: 0 created, 1 up to date\n`);
    expect((await p.push('ios', map)).stdout).toBe(`pushed operation ${id('A')} (created)\npushed 1 operations: 1 created, 0 up to date\n`);
    const pair = await routers(p.store, onTestFinished);
    await expectServed(pair, 'web', 'R1', { lookup: 'A', manifest: 'A' });
    await expectServed(pair, 'ios', 'R1', { lookup: 'A', manifest: 'A' });
  });

  it("(c) refuses a Relay id that is another operation's SHA-256, in any case or sha256: form and in any client", async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    expect((await p.push('web', await p.file('a.graphql', TEXTS.A))).code).toBe(0);
    const pair = await routers(p.store, onTestFinished);
    const before = await p.snapshot();
    for (const spelled of [id('A'), id('A').toUpperCase(), `sha256:${id('A')}`]) {
      const file = await p.file('clash.json', { [spelled]: TEXTS.C });
      for (const client of ['web', 'ios']) {
        const run = await p.push(client, file);
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(
          `error: "${id('A')}" cannot be an alias of operation ${id('C')} (C) for client "${client}": it is already the id of operation ${id('A')} (A) of client "web", ` +
            `and an id or alias names one operation in graph "default"; delete that operation first (switchyard operations delete default -c web ${id('A')}) or give the query another id\n` +
            'error: nothing was pushed\n',
        );
      }
    }
    expect(await p.snapshot()).toEqual(before);
    // A request's hash runs the text that hashes to it, for every client that has it.
    await expectServed(pair, 'web', id('A'), { lookup: 'A', manifest: 'A' });
    await expectServed(pair, 'ios', id('A'), { lookup: 'missing', manifest: 'A' });
  });

  it("(c) refuses an operation whose SHA-256 is already another operation's Relay id", async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    // A Relay id that happens to be the SHA-256 of a text nobody pushed yet: accepted.
    expect((await p.push('web', await p.file('map.json', { [id('D')]: TEXTS.C }))).code).toBe(0);
    const pair = await routers(p.store, onTestFinished);
    await expectServed(pair, 'web', id('D'), { lookup: 'C', manifest: 'C' });
    const before = await p.snapshot();
    const file = await p.file('d.graphql', TEXTS.D);
    for (const client of ['web', 'ios']) {
      const run = await p.push(client, file);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `error: "${id('D')}" cannot be the id of operation ${id('D')} (D) for client "${client}": it is already an alias of operation ${id('C')} (C) of client "web", ` +
          `and an id or alias names one operation in graph "default"; delete it first (switchyard operations delete default -c web ${id('C')}) or give the query another id\n` +
          'error: nothing was pushed\n',
      );
    }
    expect(await p.snapshot()).toEqual(before);
    await expectServed(pair, 'web', id('D'), { lookup: 'C', manifest: 'C' });
  });

  it('(c) keeps a 64-hex Relay id in lower case, so requests find it whatever case they send', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    const relayId = 'AB'.repeat(32);
    expect((await p.push('web', await p.file('map.json', { [relayId]: TEXTS.B }))).code).toBe(0);
    const pair = await routers(p.store, onTestFinished);
    await expectServed(pair, 'web', relayId, { lookup: 'B', manifest: 'B' });
    await expectServed(pair, 'web', relayId.toLowerCase(), { lookup: 'B', manifest: 'B' });
    const list = JSON.parse((await switchyard(['list', 'default', '--store', p.store, '--format', 'json'], p.dir)).stdout) as Array<{ aliases: string[] }>;
    expect(list.map((row) => row.aliases)).toEqual([[relayId.toLowerCase()]]);
    expect(await p.delete('web', relayId)).toEqual({ code: 0, stderr: '', stdout: `deleted operation ${id('B')}\n` });
  });

  it('(d) deleting the operation that owns a Relay id frees it: routers stop serving it, and it may then name another text', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    expect((await p.push('web', await p.file('v1.json', { R1: TEXTS.A }))).code).toBe(0);
    const pair = await routers(p.store, onTestFinished);
    await expectServed(pair, 'web', 'R1', { lookup: 'A', manifest: 'A' });
    const v2 = await p.file('v2.json', { R1: TEXTS.B });
    expect((await p.push('ios', v2)).code).toBe(1);
    expect(await p.delete('web', 'R1')).toEqual({ code: 0, stderr: '', stdout: `deleted operation ${id('A')}\n` });
    expect(Object.keys(await p.snapshot()).filter((path) => path.includes('R1'))).toEqual([]);
    await expectServed(pair, 'web', 'R1', { lookup: 'missing', manifest: 'missing' });
    // Freed, the id may be pushed for another text; a router serves each client only what it was pushed for.
    expect((await p.push('ios', v2)).code).toBe(0);
    await expectServed(pair, 'ios', 'R1', { lookup: 'B', manifest: 'B' });
    await expectServed(pair, 'web', 'R1', { lookup: 'missing', manifest: 'B' });
  });

  it('(d) deleting an operation one client shares keeps its Relay id naming it for the other', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    const map = await p.file('map.json', { R1: TEXTS.A });
    expect((await p.push('web', map)).code).toBe(0);
    expect((await p.push('ios', map)).code).toBe(0);
    const pair = await routers(p.store, onTestFinished);
    expect(await p.delete('web', id('A'))).toEqual({ code: 0, stderr: '', stdout: `deleted operation ${id('A')}\n` });
    await expectServed(pair, 'web', 'R1', { lookup: 'missing', manifest: 'A' });
    await expectServed(pair, 'ios', 'R1', { lookup: 'A', manifest: 'A' });
    // Still held by ios: another text cannot take it.
    expect((await p.push('web', await p.file('v2.json', { R1: TEXTS.B }))).code).toBe(1);
  });

  it('refuses a clash in a Redis store without writing anything', async ({ onTestFinished }) => {
    const p = await project(onTestFinished);
    const url = `${redis.url}/5`;
    onTestFinished(async () => void (await redis.cli('-n', '5', 'FLUSHDB')));
    const run = (client: string, file: string) => switchyard(['push', 'default', '-c', client, '-f', file, '--store', url], p.dir);
    expect((await run('web', await p.file('v1.json', { R1: TEXTS.A }))).code).toBe(0);
    const state = async () => {
      const keys = (await redis.cli('-n', '5', 'KEYS', '*')).split('\n').sort();
      const tags: Array<[string, string]> = [];
      for (const key of keys) tags.push([key, await redis.cli('-n', '5', 'HGET', key, 'tag')]);
      return tags;
    };
    const before = await state();
    expect(before.length).toBeGreaterThan(2);
    const refused = await run('ios', await p.file('v2.json', { R1: TEXTS.B, R2: TEXTS.C }));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`"R1" cannot be an alias of operation ${id('B')} (B) for client "ios": it is already an alias of operation ${id('A')} (A) of client "web"`);
    expect(await state()).toEqual(before);
  });
});
