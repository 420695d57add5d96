import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createExecutionConfig } from '../../src/compose/write-output.js';
import type { GraphSource, SubgraphRecord } from '../../src/kernel/graph/execution-config.js';
import { createLogger, createRouter, type Router } from '../../src/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { loanGraph } from './graphs/loans.js';

let subgraphs: TestSubgraph[];
let records: SubgraphRecord[];
let goodSdl: string;
let dir: string;

beforeAll(async () => {
  subgraphs = await Promise.all(loanGraph().map((s) => startSubgraph(s)));
  const composed = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
  goodSdl = composed.supergraphSdl;
  records = composed.subgraphs;
  dir = await mkdtemp(join(tmpdir(), 'switchyard-bad-supergraph-'));
});

afterAll(async () => {
  await Promise.all(subgraphs.map((s) => s.close()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Supergraphs that are not valid join-spec supergraphs, made from a good one, with what the router says. */
const BROKEN: ReadonlyArray<{ what: string; sdl: () => string; message: string }> = [
  {
    what: 'a @join__type naming a subgraph the join__Graph enum does not list',
    sdl: () => goodSdl.replace('@join__type(graph: LOANS, key: "id")', '@join__type(graph: PAYMENTS, key: "id")'),
    message: 'invalid supergraph: Member: @join__type names unknown subgraph "PAYMENTS"',
  },
  {
    what: 'a @join__field naming a subgraph the join__Graph enum does not list',
    sdl: () => goodSdl.replace('fineCents: Int! @join__field(graph: LOANS, override: "legacy")', 'fineCents: Int! @join__field(graph: ARCHIVE)'),
    message: 'invalid supergraph: Member: @join__field names unknown subgraph "ARCHIVE"',
  },
  {
    what: 'a key that is not a field set',
    sdl: () => goodSdl.replace('@join__type(graph: LOANS, key: "id")', '@join__type(graph: LOANS, key: "id {")'),
    message: 'invalid supergraph: Member: field set "id {" does not parse: Syntax Error: Expected Name, found "}".',
  },
  {
    what: 'a key naming a field the type does not have',
    sdl: () => goodSdl.replace('@join__type(graph: LOANS, key: "id")', '@join__type(graph: LOANS, key: "memberNumber")'),
    message: 'invalid supergraph: Member @key(fields: "memberNumber") in subgraph "loans": Member has no field "memberNumber"',
  },
  {
    what: 'no join__Graph enum',
    sdl: () => goodSdl.replace(/enum join__Graph \{[^}]*\}/, ''),
    message: 'no enum join__Graph',
  },
  {
    what: 'a plain schema',
    sdl: () => 'type Query { members: [String] }',
    message: 'invalid supergraph: it does not link the join spec',
  },
];

const silent = () => createLogger({ level: 'silent' });
const source = (supergraphSdl: string, subgraphRecords = records): GraphSource => ({ supergraphSdl, subgraphs: subgraphRecords, origin: 'test.graphql' });
const config = { execution_config: { file: { watch: false } } };

describe('a supergraph that is not a valid join-spec supergraph', () => {
  for (const broken of BROKEN) {
    it(`stops startup with a clear message: ${broken.what}`, async () => {
      await expect(createRouter({ graph: source(broken.sdl()), logger: silent(), config })).rejects.toMatchObject({
        code: 'SUPERGRAPH_INVALID',
        message: expect.stringContaining(broken.message),
      });
    });
  }

  it('stops startup when the routing data lists a subgraph the supergraph does not have, or misses one', async () => {
    const extra = [...records, { kind: 'graphql' as const, name: 'payments', url: 'http://127.0.0.1:1/graphql' }];
    const file = join(dir, 'extra.json');
    await writeFile(file, JSON.stringify({ ...createExecutionConfig({ supergraphSdl: goodSdl, subgraphs: records }), subgraphs: extra }));
    await expect(createRouter({ graph: file, logger: silent(), config })).rejects.toMatchObject({
      code: 'SUPERGRAPH_INVALID',
      message: expect.stringContaining(`unknown subgraph "payments" (not in the supergraph's join__Graph)`),
    });
    await expect(createRouter({ graph: source(goodSdl, records.slice(1)), logger: silent(), config })).rejects.toMatchObject({
      code: 'SUPERGRAPH_INVALID',
      message: expect.stringContaining(`no routing data for subgraph "${records[0]!.name}"`),
    });
  });
});

describe('a bad supergraph on reload', () => {
  let router: Router;
  const members = '{ members { name fineCents } }';
  const expected = {
    data: {
      members: [
        { name: 'Iris', fineCents: 0 },
        { name: 'Omar', fineCents: 250 },
      ],
    },
  };

  beforeAll(async () => {
    router = await createRouter({ graph: source(goodSdl), logger: silent(), config });
  });
  afterAll(async () => {
    await router?.close();
  });

  it('is refused, and the router keeps answering with the previous graph', async () => {
    for (const broken of BROKEN) {
      await expect(router.loadGraph(source(broken.sdl()))).rejects.toMatchObject({ code: 'SUPERGRAPH_INVALID' });
      expect((await router.execute({ query: members })).body).toEqual(expected);
    }
  });

  it('is refused from a watched file, logged, and a good file afterwards is picked up', async () => {
    const file = join(dir, 'watched.json');
    await writeFile(file, JSON.stringify(createExecutionConfig({ supergraphSdl: goodSdl, subgraphs: records })));
    const lines: Array<{ msg: string; error?: string }> = [];
    const watching = await createRouter({
      graph: file,
      logger: createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } }),
      config: { execution_config: { file: { watch: true } } },
    });
    try {
      await writeFile(`${file}.tmp`, JSON.stringify(createExecutionConfig({ supergraphSdl: BROKEN[0]!.sdl(), subgraphs: records })));
      await rename(`${file}.tmp`, file);
      await until(() => lines.some((l) => l.msg === 'Graph reload failed; still serving the previous graph'));
      expect(lines.find((l) => l.msg === 'Graph reload failed; still serving the previous graph')?.error).toContain('names unknown subgraph "PAYMENTS"');
      expect((await watching.execute({ query: members })).body).toEqual(expected);

      const withoutLegacy = composeSubgraphs(subgraphs.filter((s) => s.name === 'loans').map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
      await writeFile(`${file}.tmp`, JSON.stringify(createExecutionConfig(withoutLegacy)));
      await rename(`${file}.tmp`, file);
      await until(async () => (await watching.execute({ query: members })).status === 400);
      expect((await watching.execute({ query: '{ overdueCount }' })).body).toEqual({ data: { overdueCount: 1 } });
    } finally {
      await watching.close();
    }
  });
});

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
