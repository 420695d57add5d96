import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { createExecutionConfig } from '../../../src/compose/write-output.js';
import { createLogger, createRouter, type Router } from '../../../src/index.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
let people: TestSubgraph;
let router: Router;
let dir: string;
let file: string;
const logLines: Array<{ msg: string }> = [];

/** Writes the file the way editors and `switchyard compose` do: a new file renamed over the old one. */
async function replace(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  people = await startSubgraph(peopleSubgraph());
  dir = await mkdtemp(join(tmpdir(), 'switchyard-reload-'));
  file = join(dir, 'router.execution.config.json');
  await replace(file, JSON.stringify(createExecutionConfig(composeSubgraphs([{ name: 'library', url: library.url, sdl: library.typeDefs }]))));
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logLines.push(JSON.parse(line)) } });
  router = await createRouter({ graph: file, logger });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([library?.close(), people?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ask = (query: string) => router.execute({ query });

describe('hot reload of the graph file', () => {
  it('picks up a new graph without a restart and without failing requests in between', async () => {
    expect((await ask('{ book(id: "b1") { title } }')).body).toEqual({ data: { book: { title: 'Dune' } } });
    expect((await ask('{ books { ratings } }')).status).toBe(400);
    const composed = composeSubgraphs([library, people].map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
    let failures = 0;
    let stop = false;
    const load = (async () => {
      while (!stop) if ((await ask('{ book(id: "b1") { title } }')).status !== 200) failures++;
    })();
    await replace(file, JSON.stringify(createExecutionConfig(composed)));
    await until(async () => (await ask('{ book(id: "b1") { ratings } }')).status === 200);
    stop = true;
    await load;
    expect(failures).toBe(0);
    expect((await ask('{ book(id: "b1") { ratings } }')).body).toEqual({ data: { book: { ratings: [5, 4] } } });
  });

  it('keeps serving the previous graph when the new file is invalid, and logs why', async () => {
    await replace(file, '{ "version": 1, "supergraph": "type Query { broken: String }", "subgraphs": [] }');
    await until(async () => logLines.some((line) => line.msg === 'Graph reload failed; still serving the previous graph'));
    expect((await ask('{ book(id: "b1") { ratings } }')).body).toEqual({ data: { book: { ratings: [5, 4] } } });
    const ready = await router.handle(new Request('http://router.test/health/ready'));
    expect(ready.status).toBe(200);
  });
});

describe('a graph read from a URL', () => {
  it('is read once, and the router says that watch applies to files only, without the URL credentials', async () => {
    const text = JSON.stringify(createExecutionConfig(composeSubgraphs([{ name: 'library', url: library.url, sdl: library.typeDefs }])));
    const server = createServer((_request, response) => response.end(text));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const lines: Array<{ msg: string; origin?: string }> = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    const { port } = server.address() as AddressInfo;
    const fromUrl = await createRouter({ graph: `http://user:secret@127.0.0.1:${port}/graph.json`, logger });
    try {
      expect((await fromUrl.execute({ query: '{ book(id: "b1") { title } }' })).body).toEqual({ data: { book: { title: 'Dune' } } });
      const said = lines.filter((line) => line.msg === 'Graph read from a URL once; execution_config.file.watch applies to files only');
      expect(said).toEqual([expect.objectContaining({ origin: `http://127.0.0.1:${port}/graph.json` })]);
      expect(JSON.stringify(lines)).not.toContain('secret');
    } finally {
      await fromUrl.close();
      server.close();
    }
  });
});
