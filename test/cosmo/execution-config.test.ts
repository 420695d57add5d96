/**
 * Cosmo's execution config, as the real `wgc router compose` writes it in this
 * run, served by `execution_config.file.path`: the same answers as a router on
 * `switchyard compose`'s output for the same compose file, for HTTP and mixed
 * HTTP + gRPC graphs, with hot reload.
 */
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { useGrpc } from '../../plugins/grpc/index.js';
import { composeGraph } from '../../src/compose/compose.js';
import { createExecutionConfig } from '../../src/compose/write-output.js';
import { parseGrpcMapping } from '../../src/grpc/mapping.js';
import { writeServiceFiles } from '../../src/grpc/service-files.js';
import { createLogger, createRouter, readGraphSource, RouterError, type Router } from '../../src/index.js';
import { parseGraphSource } from '../../src/kernel/graph/execution-config.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../kernel/library-subgraphs.js';
import { catalogService, inventorySubgraph } from '../plugins/grpc/catalog-fixture.js';
import { generatedServiceOf } from '../plugins/grpc/grpc-graph.js';
import { startGrpcService, type TestGrpcService } from '../plugins/grpc/grpc-test-service.js';
import { wgcRouterCompose } from './wgc.js';

// wgc loads Cosmo's composition library on each run: seconds on a busy machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const silent = () => createLogger({ level: 'silent' });
const dirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-cosmo-'));
  dirs.push(dir);
  return dir;
}

const routers: Router[] = [];

/** Closes the router after the test. */
function track(router: Router): Router {
  routers.push(router);
  return router;
}

afterEach(async () => {
  await Promise.all(routers.splice(0).map((router) => router.close()));
});

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A graph.yaml (Cosmo's compose file; `switchyard compose` reads the same shape) over SDL files. */
function composeFile(subgraphs: ReadonlyArray<{ name: string; url: string; file: string; subscriptionUrl?: string }>): string {
  const lines = ['version: 1', 'subgraphs:'];
  for (const { name, url, file, subscriptionUrl } of subgraphs) {
    lines.push(`  - name: ${name}`, `    routing_url: ${url}`, '    schema:', `      file: ./${file}`);
    if (subscriptionUrl) lines.push('    subscription:', `      url: ${subscriptionUrl}`, '      protocol: sse');
  }
  return `${lines.join('\n')}\n`;
}

/** Sends one request through a router, in-process. */
async function ask(router: Router, query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const response = await router.handle(
    new Request('http://router.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query, variables }),
    }),
  );
  return { status: response.status, body: await response.json() };
}

const QUERIES: ReadonlyArray<{ query: string; variables?: Record<string, unknown> }> = [
  { query: '{ book(id: "b1") { title ratings author { name } } }' },
  { query: '{ books { id title author { id name } ratings } }' },
  { query: 'query Search($term: String!) { search(term: $term) { __typename ... on Book { title } ... on Author { name } } }', variables: { term: 'a' } },
  { query: '{ failing book(id: "b2") { title } }' },
  { query: '{ mustNotFail }' },
  { query: '{ echo(text: "ab", times: 3) }' },
  { query: '{ book(id: "nope") { title } }' },
  { query: '{ __schema { queryType { name } } __type(name: "Book") { fields { name } } }' },
  { query: '{ book(id: "b1") { unknownField } }' },
];

describe('Cosmo execution config (HTTP subgraphs)', () => {
  let library: TestSubgraph;
  let people: TestSubgraph;
  let dir: string;
  let cosmoFile: string;
  let libraryOnlyFile: string;
  let oursFile: string;

  beforeAll(async () => {
    library = await startSubgraph(librarySubgraph());
    people = await startSubgraph(peopleSubgraph());
    dir = await tempDir();
    await writeFile(join(dir, 'library.graphql'), library.typeDefs);
    await writeFile(join(dir, 'people.graphql'), people.typeDefs);
    await writeFile(
      join(dir, 'graph.yaml'),
      composeFile([
        { name: 'library', url: library.url, file: 'library.graphql' },
        { name: 'people', url: people.url, file: 'people.graphql', subscriptionUrl: `${people.url}/stream` },
      ]),
    );
    await writeFile(join(dir, 'library.yaml'), composeFile([{ name: 'library', url: library.url, file: 'library.graphql' }]));
    cosmoFile = join(dir, 'config.json');
    libraryOnlyFile = join(dir, 'library.json');
    // Both wgc runs side by side: the graph of both subgraphs, and the library alone (the reload test starts from it).
    await Promise.all([wgcRouterCompose('graph.yaml', 'config.json', dir), wgcRouterCompose('library.yaml', 'library.json', dir)]);
    // Our own compose output for the same compose file.
    const composedFile = join(dir, 'graph.compose.yaml');
    await writeFile(
      composedFile,
      composeFile([
        { name: 'library', url: library.url, file: 'library.graphql' },
        { name: 'people', url: people.url, file: 'people.graphql' },
      ]),
    );
    oursFile = join(dir, 'router.execution.config.json');
    await writeFile(oursFile, JSON.stringify(createExecutionConfig(await composeGraph(composedFile))));
  });

  afterAll(async () => {
    await Promise.all([library?.close(), people?.close()]);
  });

  it('is what wgc writes: engineConfig with data sources, no join-spec supergraph', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: wgc's JSON is walked by key in the assertions.
    const json = JSON.parse(await readFile(cosmoFile, 'utf8')) as Record<string, any>;
    expect(json.engineConfig.datasourceConfigurations).toHaveLength(2);
    expect(json.engineConfig.datasourceConfigurations[0].customGraphql.fetch.url.staticVariableContent).toBe(library.url);
    expect(json.engineConfig.graphqlSchema).not.toContain('join__');
    expect(json.subgraphs.map((s: { name: string }) => s.name)).toEqual(['library', 'people']);
  });

  it('loads as the same graph as our own compose output: subgraphs, routing URLs, supergraph', async () => {
    const cosmo = await readGraphSource(cosmoFile);
    const ours = await readGraphSource(oursFile);
    expect(cosmo.supergraphSdl).toBe(ours.supergraphSdl);
    expect(cosmo.subgraphs.map(({ kind, name, url }) => ({ kind, name, url }))).toEqual(ours.subgraphs);
    expect(cosmo.subgraphs[1]).toMatchObject({ subscription: { url: `${people.url}/stream`, protocol: 'sse' } });
    expect(cosmo.subgraphs[0]).toMatchObject({ subscription: { url: library.url, protocol: 'ws', websocketSubprotocol: 'auto' } });
  });

  it('answers every query as a router on `switchyard compose` output does', async () => {
    const cosmoRouter = track(await createRouter({ graph: cosmoFile, logger: silent(), config: { execution_config: { file: { watch: false } } } }));
    const oursRouter = track(await createRouter({ graph: oursFile, logger: silent(), config: { execution_config: { file: { watch: false } } } }));
    for (const { query, variables } of QUERIES) {
      const [fromCosmo, fromOurs] = [await ask(cosmoRouter, query, variables), await ask(oursRouter, query, variables)];
      expect(fromCosmo, query).toEqual(fromOurs);
    }
    expect(await ask(cosmoRouter, '{ book(id: "b1") { title ratings author { name } } }')).toEqual({
      status: 200,
      body: { data: { book: { title: 'Dune', ratings: [5, 4], author: { name: 'Frank Herbert' } } } },
    });
  });

  it('starts from execution_config.file.path in router.config.yaml and reloads when wgc rewrites the file', async () => {
    // Both files are wgc's, written in beforeAll: the library alone, then the library and people (cosmoFile).
    const reloadDir = await tempDir();
    const path = join(reloadDir, 'config.json');
    await copyFile(libraryOnlyFile, path);
    const router = track(await createRouter({ logger: silent(), config: { execution_config: { file: { path, watch: true } } } }));
    expect(await ask(router, '{ book(id: "b1") { title } }')).toEqual({ status: 200, body: { data: { book: { title: 'Dune' } } } });
    expect((await ask(router, '{ book(id: "b1") { ratings } }')).status).toBe(400);

    // wgc writes in place; write elsewhere and rename, as a deploy would.
    await copyFile(cosmoFile, join(reloadDir, 'next.json'));
    await rename(join(reloadDir, 'next.json'), path);
    const deadline = Date.now() + 20_000;
    while ((await ask(router, '{ book(id: "b1") { ratings } }')).status !== 200) {
      if (Date.now() > deadline) throw new Error('the router did not reload the new Cosmo execution config');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await ask(router, '{ book(id: "b1") { ratings } }')).toEqual({ status: 200, body: { data: { book: { ratings: [5, 4] } } } });
  });
});

describe('Cosmo execution config (gRPC and HTTP subgraphs)', () => {
  let catalog: TestGrpcService;
  let inventory: TestSubgraph;
  let dir: string;

  beforeAll(async () => {
    const definition = catalogService();
    const service = await generatedServiceOf(definition.sdl);
    catalog = await startGrpcService({ proto: service.proto, service: service.serviceName, handlers: definition.handlers });
    inventory = await startSubgraph(inventorySubgraph);
    dir = await tempDir();
    await mkdir(join(dir, 'catalog'));
    await writeFile(join(dir, 'catalog/schema.graphql'), definition.sdl);
    await writeServiceFiles({ schemaFile: join(dir, 'catalog/schema.graphql'), outDir: join(dir, 'catalog/proto') });
    await writeFile(join(dir, 'inventory.graphql'), inventorySubgraph.typeDefs);
    await writeFile(
      join(dir, 'graph.yaml'),
      [
        'version: 1',
        'subgraphs:',
        '  - name: catalog',
        `    routing_url: ${catalog.target}`,
        '    grpc:',
        '      schema_file: ./catalog/schema.graphql',
        '      proto_file: ./catalog/proto/service.proto',
        '      mapping_file: ./catalog/proto/mapping.json',
        '  - name: inventory',
        `    routing_url: ${inventory.url}`,
        '    schema:',
        '      file: ./inventory.graphql',
        '',
      ].join('\n'),
    );
    await wgcRouterCompose('graph.yaml', 'config.json', dir);
    await writeFile(join(dir, 'ours.json'), JSON.stringify(createExecutionConfig(await composeGraph(join(dir, 'graph.yaml')))));
  });

  afterAll(async () => {
    await Promise.all([catalog?.close(), inventory?.close()]);
  });

  it('carries the gRPC subgraph: target, SDL, proto and mapping as our compose embeds them', async () => {
    const cosmo = await readGraphSource(join(dir, 'config.json'));
    const ours = await readGraphSource(join(dir, 'ours.json'));
    expect(cosmo.supergraphSdl).toBe(ours.supergraphSdl);
    const [fromCosmo, fromOurs] = [cosmo.subgraphs[0], ours.subgraphs[0]];
    if (fromCosmo?.kind !== 'grpc' || fromOurs?.kind !== 'grpc') throw new Error('expected gRPC records');
    expect(fromCosmo).toMatchObject({ kind: 'grpc', name: 'catalog', url: catalog.target });
    expect({ ...fromCosmo, mapping: undefined }).toEqual({ ...fromOurs, mapping: undefined });
    // Cosmo writes the mapping as protobuf JSON, which leaves out empty lists; read, they are the same.
    expect(parseGrpcMapping(fromCosmo.mapping, 'cosmo')).toEqual(parseGrpcMapping(fromOurs.mapping, 'ours'));
  });

  it('answers as a router on our compose output does', async () => {
    const options = { logger: silent(), config: { execution_config: { file: { watch: false } } } };
    const cosmoRouter = track(await createRouter({ ...options, graph: join(dir, 'config.json'), plugins: [useGrpc()] }));
    const oursRouter = track(await createRouter({ ...options, graph: join(dir, 'ours.json'), plugins: [useGrpc()] }));
    const queries = [
      '{ product(id: "p1") { name price kind inStock weight shippingEstimate } }',
      '{ warehouse { id name kind tags } featured { kind } }',
      '{ serverTime }',
      '{ product(id: "missing") { name } }',
    ];
    for (const query of queries) {
      const fromCosmo = await ask(cosmoRouter, query);
      expect(fromCosmo, query).toEqual(await ask(oursRouter, query));
    }
    expect((await ask(cosmoRouter, '{ product(id: "p1") { name inStock } }')).body).toMatchObject({ data: { product: { inStock: true } } });
  });
});

describe('Cosmo execution config: what is refused, and why', () => {
  const base = (dataSource: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      engineConfig: { datasourceConfigurations: [{ id: '0', kind: 'GRAPHQL', ...dataSource }] },
      subgraphs: [{ id: '0', name: 'events', routingUrl: 'http://127.0.0.1:1/graphql' }],
      version: '00000000-0000-0000-0000-000000000000',
      ...extra,
    });
  const sdl = 'type Query { a: String }';
  const failure = (text: string): string => {
    try {
      parseGraphSource(text, 'config.json');
    } catch (error) {
      expect(error).toBeInstanceOf(RouterError);
      return (error as RouterError).message;
    }
    throw new Error('expected a refusal');
  };

  it('an event-driven data source', () => {
    expect(failure(base({ kind: 'PUBSUB', customEvents: {} }))).toMatch(/subgraph "events": an event-driven \(EDFS/);
  });

  it('a Cosmo router plugin', () => {
    const grpc = { mapping: { service: 'S' }, protoSchema: 'syntax = "proto3";', plugin: { name: 'p', version: '0.0.1' } };
    expect(failure(base({ customGraphql: { federation: { serviceSdl: sdl }, grpc } }))).toMatch(/Cosmo router plugin/);
  });

  it('feature flags', () => {
    const flags = { featureFlagConfigs: { configByFeatureFlagName: { beta: {} } } };
    expect(failure(base({ customGraphql: { federation: { serviceSdl: sdl } } }, flags))).toMatch(/feature flags \(beta\) are not supported/);
  });

  it('static headers, pointing to header rules', () => {
    const fetch = { url: { staticVariableContent: 'http://127.0.0.1:1/graphql' }, header: { 'x-a': { values: [] } } };
    expect(failure(base({ customGraphql: { federation: { serviceSdl: sdl }, fetch } }))).toMatch(/headers\.subgraphs\.<name>\.request/);
  });

  it('a data source without its subgraph SDL', () => {
    expect(failure(base({ customGraphql: { fetch: {} } }))).toMatch(/serviceSdl: required/);
  });

  it('reads an environment-variable routing URL', () => {
    const url = { kind: 'ENV_CONFIGURATION_VARIABLE', environmentVariableName: 'SWITCHYARD_TEST_NO_SUCH_VAR', environmentVariableDefaultValue: 'http://127.0.0.1:9/graphql' };
    const source = parseGraphSource(base({ customGraphql: { federation: { serviceSdl: sdl }, fetch: { url } } }), 'config.json');
    expect(source.subgraphs).toEqual([{ kind: 'graphql', name: 'events', url: 'http://127.0.0.1:9/graphql' }]);
  });
});
