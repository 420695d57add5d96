import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { composeGraph, writeOutput } from '../../src/compose/index.js';
import { RouterError } from '../../src/kernel/errors.js';
import { readGraphSource } from '../../src/kernel/graph/execution-config.js';
import { accountsSdl, clashingSdl, createTempDir, productsSdl, reviewsSdl, type TempDir } from './fixtures.js';

let dir: TempDir;
beforeEach(async () => {
  dir = await createTempDir();
});
afterEach(async () => {
  await dir.remove();
});

const threeSubgraphs = `
version: 1
subgraphs:
  - name: accounts
    routing_url: http://127.0.0.1:4001/graphql
    schema:
      file: ./schemas/accounts.graphql
  - name: reviews
    routing_url: http://127.0.0.1:4002/graphql
    schema:
      file: schemas/reviews.graphqls
  - name: products
    routing_url: http://127.0.0.1:4003/graphql
    schema:
      file: ../shared/products.graphql
`;

async function writeThreeSubgraphs(): Promise<string> {
  await dir.write('graph/schemas/accounts.graphql', accountsSdl);
  await dir.write('graph/schemas/reviews.graphqls', reviewsSdl);
  await dir.write('shared/products.graphql', productsSdl);
  return dir.write('graph/router.compose.yaml', threeSubgraphs);
}

async function compositionError(composeFile: string): Promise<RouterError> {
  const error = await composeGraph(composeFile).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RouterError);
  return error as RouterError;
}

describe('composeGraph', () => {
  it('composes schema files found relative to the compose file into one supergraph', async () => {
    const graph = await composeGraph(await writeThreeSubgraphs());
    expect(graph.subgraphs).toEqual([
      { kind: 'graphql', name: 'accounts', url: 'http://127.0.0.1:4001/graphql' },
      { kind: 'graphql', name: 'reviews', url: 'http://127.0.0.1:4002/graphql' },
      { kind: 'graphql', name: 'products', url: 'http://127.0.0.1:4003/graphql' },
    ]);
    expect(graph.supergraphSdl).toContain('@join__graph(name: "products", url: "http://127.0.0.1:4003/graphql")');
    expect(graph.supergraphSdl).toContain('reviews: [Review!]! @join__field(graph: REVIEWS)');
  });

  it('writes an execution config the router reads back', async () => {
    const graph = await composeGraph(await writeThreeSubgraphs());
    const out = join(dir.path, 'out', 'router.execution.config.json');
    expect(await writeOutput(out, graph)).toBe('execution-config');
    const json = JSON.parse(await readFile(out, 'utf8')) as { version: number; compose: { composedAt: string } };
    expect(json.version).toBe(1);
    expect(Date.parse(json.compose.composedAt)).not.toBeNaN();
    const source = await readGraphSource(out);
    expect(source.origin).toBe(out);
    expect(source.supergraphSdl).toBe(graph.supergraphSdl);
    expect(source.subgraphs.map((s) => s.name)).toEqual(['accounts', 'reviews', 'products']);
  });

  it('writes a plain supergraph SDL the router reads back', async () => {
    const graph = await composeGraph(await writeThreeSubgraphs());
    const out = join(dir.path, 'supergraph.graphql');
    expect(await writeOutput(out, graph)).toBe('supergraph-sdl');
    expect(await readFile(out, 'utf8')).toBe(`${graph.supergraphSdl}\n`);
    const source = await readGraphSource(out);
    // An SDL lists its subgraphs in join__Graph order, which composition sorts by name.
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(source.subgraphs).toEqual([...graph.subgraphs].sort(byName));
  });

  it('fails with every composition error on its own line, with the library code', async () => {
    await dir.write('accounts.graphql', accountsSdl);
    await dir.write('clash.graphql', clashingSdl);
    const file = await dir.write(
      'router.compose.yaml',
      'version: 1\nsubgraphs:\n  - {name: accounts, routing_url: "http://127.0.0.1:4001/graphql", schema: {file: accounts.graphql}}\n  - {name: clash, routing_url: "http://127.0.0.1:4009/graphql", schema: {file: clash.graphql}}\n',
    );
    const error = await compositionError(file);
    expect(error.code).toBe('COMPOSITION_FAILED');
    const lines = error.message.split('\n');
    expect(lines[0]).toBe(`composition of ${file} failed with 2 errors:`);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^FIELD_TYPE_MISMATCH: Type of field "Query.me" is incompatible across subgraphs/),
      expect.stringMatching(/^INVALID_FIELD_SHARING: Non-shareable field "Query.me"/),
    ]);
    expect(error.extensions?.problems).toEqual([expect.objectContaining({ code: 'FIELD_TYPE_MISMATCH' }), expect.objectContaining({ code: 'INVALID_FIELD_SHARING' })]);
  });

  it('names the subgraph, file, line and column of a subgraph schema syntax error', async () => {
    const schema = await dir.write('accounts.graphql', 'type Query {\n  me: \n}\n');
    const file = await dir.write(
      'router.compose.yaml',
      'version: 1\nsubgraphs:\n  - {name: accounts, routing_url: "http://127.0.0.1:4001/graphql", schema: {file: accounts.graphql}}\n',
    );
    const error = await compositionError(file);
    expect(error.code).toBe('COMPOSITION_FAILED');
    expect(error.message.split('\n')).toEqual([`cannot compose ${file}:`, `subgraph "accounts": ${schema}:3:1: Syntax Error: Expected Name, found "}".`]);
  });

  it('reports every missing schema file, naming the subgraph and the resolved path', async () => {
    const file = await dir.write(
      'graph/router.compose.yaml',
      'version: 1\nsubgraphs:\n  - {name: a, routing_url: "http://x/graphql", schema: {file: a.graphql}}\n  - {name: b, routing_url: "http://y/graphql", schema: {file: ../b.graphql}}\n',
    );
    const error = await compositionError(file);
    expect(error.message.split('\n').slice(1)).toEqual([
      `subgraph "a": schema file not found: ${join(dir.path, 'graph', 'a.graphql')}`,
      `subgraph "b": schema file not found: ${join(dir.path, 'b.graphql')}`,
    ]);
  });

  it('reports the missing files of a gRPC subgraph, naming the subgraph', async () => {
    const file = await dir.write(
      'router.compose.yaml',
      'version: 1\nsubgraphs:\n  - name: products\n    routing_url: localhost:50051\n    grpc: {schema_file: s.graphql, proto_file: service.proto, mapping_file: mapping.json}\n',
    );
    const error = await compositionError(file);
    expect(error.code).toBe('COMPOSITION_FAILED');
    expect(error.message).toContain(`subgraph "products": schema file not found: ${join(dir.path, 's.graphql')}`);
  });

  it('refuses a missing compose file and an invalid one with CONFIG_INVALID', async () => {
    const missing = await compositionError(join(dir.path, 'nope.yaml'));
    expect(missing.code).toBe('CONFIG_INVALID');
    expect(missing.message).toBe(`compose file not found: ${join(dir.path, 'nope.yaml')}`);
    const bad = await compositionError(await dir.write('router.compose.yaml', 'version: 1\nsubgraphs:\n  - name: a\n'));
    expect(bad.code).toBe('CONFIG_INVALID');
    expect(bad.message).toContain('subgraphs[0] ("a").routing_url: required');
  });
});
