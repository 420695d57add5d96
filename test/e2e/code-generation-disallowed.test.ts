/**
 * A router started with `node --disallow-code-generation-from-strings`
 * (src/kernel/code-generation.ts): the kernel's compiled shapers and entity
 * collectors and the grpc plugin's compiled readers are built from the
 * second run of an operation on, so each operation runs several times and
 * every answer must be the full, right one; the grpc plugin's protobufjs
 * messages (generated code too) are encoded and decoded without it
 * (plugins/grpc/message-codec.ts). Real processes: the router
 * through the CLI, an HTTP subgraph and a @grpc/grpc-js service on loopback.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs, renderOutput } from '../../src/compose/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { freePort, spawnCli, waitFor } from '../cli/run-cli.js';
import { catalogService, inventorySubgraph } from '../plugins/grpc/catalog-fixture.js';
import { generatedServiceOf } from '../plugins/grpc/grpc-graph.js';
import { startGrpcService, type TestGrpcService } from '../plugins/grpc/grpc-test-service.js';

const FLAG = '--disallow-code-generation-from-strings';
const nodeOptions = [process.env.NODE_OPTIONS, FLAG].filter(Boolean).join(' ');

let dir: string;
let inventory: TestSubgraph;
let catalog: TestGrpcService;
let router: ReturnType<typeof spawnCli>;
let base: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-no-codegen-'));
  inventory = await startSubgraph(inventorySubgraph);
  const definition = catalogService();
  const generated = await generatedServiceOf(definition.sdl);
  catalog = await startGrpcService({ proto: generated.proto, service: generated.serviceName, handlers: definition.handlers });
  const graph = composeSubgraphs([
    { name: 'catalog', url: catalog.target, sdl: definition.sdl, grpc: { proto: generated.proto, mapping: generated.mapping } },
    { name: 'inventory', url: inventory.url, sdl: inventorySubgraph.typeDefs },
  ]);
  const file = join(dir, 'router.execution.config.json');
  await writeFile(file, renderOutput(graph, 'execution-config'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  router = spawnCli(['router', '--supergraph', file, '--listen-addr', `127.0.0.1:${port}`], { cwd: dir, env: { LOG_LEVEL: 'warn', NODE_OPTIONS: nodeOptions } });
  await waitFor(async () => {
    if (router.exitCode !== null) throw new Error(`the router exited:\n${router.output().stderr}`);
    return (await fetch(`${base}/health/ready`)).status === 200;
  }).catch((error: unknown) => {
    throw new Error(`the router did not get ready: ${String(error)}\n${router.output().stdout}${router.output().stderr}`);
  });
}, 90_000);

afterAll(async () => {
  if (router && router.exitCode === null) {
    router.kill('SIGTERM');
    await router.exited;
  }
  await catalog?.close();
  await inventory?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function query(text: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: text }),
  });
  return { status: response.status, body: await response.json() };
}

/** HTTP subgraph only: the kernel's compiled shaper. */
const STOCK = '{ warehouse { id inStock weight } featured { id } }';
const STOCK_ANSWER = {
  data: {
    warehouse: [
      { id: 'p1', inStock: true, weight: 40 },
      { id: 'p2', inStock: true, weight: 0 },
      { id: 'p3', inStock: false, weight: 2 },
    ],
    featured: [{ id: 'p3' }],
  },
};

/** HTTP root, then a gRPC entity lookup and a `@requires` call: an entity collector, gRPC object readers and a shaper. */
const WAREHOUSE = '{ warehouse { id inStock name price tags kind shippingEstimate } }';
const WAREHOUSE_ANSWER = {
  data: {
    warehouse: [
      { id: 'p1', inStock: true, name: 'Table', price: 899.5, tags: ['wood', 'dining'], kind: 'PHYSICAL', shippingEstimate: 20 },
      { id: 'p2', inStock: true, name: 'Manual', price: 10, tags: [], kind: 'DIGITAL', shippingEstimate: 0 },
      { id: 'p3', inStock: false, name: 'Lamp', price: 30, tags: ['light'], kind: 'PHYSICAL', shippingEstimate: 1 },
    ],
  },
};

/** gRPC root, then an HTTP entity fetch. */
const PRODUCTS = '{ products { id name stock discontinued inStock category { name parent { name } } } }';
const PRODUCTS_ANSWER = {
  data: {
    products: [
      { id: 'p1', name: 'Table', stock: 3, discontinued: false, inStock: true, category: { name: 'Tables', parent: { name: 'Furniture' } } },
      { id: 'p2', name: 'Manual', stock: null, discontinued: null, inStock: true, category: null },
      { id: 'p3', name: 'Lamp', stock: 0, discontinued: null, inStock: false, category: null },
    ],
  },
};

/** gRPC root with an input (a filter with enums), and a field with its own resolver RPC (built from the decoded parent). */
const FILTERED = '{ products(filter: { kinds: [PHYSICAL], minPrice: 20 }) { name reviews(limit: 1) { rating body } } }';
const FILTERED_ANSWER = {
  data: {
    products: [
      { name: 'Table', reviews: [{ rating: 5, body: 'Solid.' }] },
      { name: 'Lamp', reviews: [{ rating: 2, body: 'Too dim.' }] },
    ],
  },
};

describe('a router under --disallow-code-generation-from-strings', () => {
  it('runs in a process where generated code cannot be compiled (the flag reaches Node through NODE_OPTIONS)', () => {
    const probe = spawnSync(process.execPath, ['-e', "new Function('')"], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, encoding: 'utf8' });
    expect(probe.status).not.toBe(0);
    expect(probe.stderr).toContain('Code generation from strings disallowed');
  });

  it('answers the same operations fully and rightly every time they run, over HTTP and gRPC subgraphs', async () => {
    for (let run = 1; run <= 5; run++) {
      expect({ run, ...(await query(STOCK)) }).toEqual({ run, status: 200, body: STOCK_ANSWER });
      expect({ run, ...(await query(WAREHOUSE)) }).toEqual({ run, status: 200, body: WAREHOUSE_ANSWER });
      expect({ run, ...(await query(PRODUCTS)) }).toEqual({ run, status: 200, body: PRODUCTS_ANSWER });
      expect({ run, ...(await query(FILTERED)) }).toEqual({ run, status: 200, body: FILTERED_ANSWER });
    }
    expect(router.exitCode).toBeNull();
    expect(router.output().stderr).not.toMatch(/EvalError|Code generation/);
  });
});
