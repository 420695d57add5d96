import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { composeGraph, composeSubgraphs, writeOutput } from '../../src/compose/index.js';
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

describe('directives Cosmo defines for subgraphs', () => {
  it('composes a schema that uses @connect__fieldResolver without defining it (as written for Cosmo), and keeps it out of the supergraph', () => {
    const sdl = `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
      type Query { project(id: ID!): Project }
      type Project @key(fields: "id") { id: ID! name: String! tasks(status: String): [String!]! @connect__fieldResolver(context: "id name") }
    `;
    const composed = composeSubgraphs([{ name: 'projects', url: 'http://127.0.0.1:4001/graphql', sdl }]);
    expect(composed.supergraphSdl).toContain('tasks(status: String): [String!]!');
    expect(composed.supergraphSdl).not.toContain('connect__fieldResolver');
    // A schema that defines it itself is taken as it is.
    const defined = `directive @connect__fieldResolver(context: String!) on FIELD_DEFINITION\n${sdl}`;
    expect(composeSubgraphs([{ name: 'projects', url: 'http://127.0.0.1:4001/graphql', sdl: defined }]).supergraphSdl).toBe(composed.supergraphSdl);
  });
});

describe('Federation v2 without @link (older Cosmo execution configs)', () => {
  it('reads a subgraph that uses a directive only Federation v2 has as v2, as Cosmo composition does', () => {
    const products = 'type Query { products: [Product!]! } type Product @key(fields: "id") { id: ID! name: String! @shareable }';
    const prices = 'type Product @key(fields: "id") { id: ID! name: String! @shareable price: Int! }';
    const composed = composeSubgraphs([
      { name: 'products', url: 'http://127.0.0.1:4001/graphql', sdl: products },
      { name: 'prices', url: 'http://127.0.0.1:4002/graphql', sdl: prices },
    ]);
    expect(composed.supergraphSdl).toMatch(/price: Int! @join__field\(graph: PRICES\)/);
    // The same schemas with the @link written out compose to the same supergraph.
    const link = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@shareable"])';
    const linked = composeSubgraphs([
      { name: 'products', url: 'http://127.0.0.1:4001/graphql', sdl: `${link}\n${products}` },
      { name: 'prices', url: 'http://127.0.0.1:4002/graphql', sdl: `${link}\n${prices}` },
    ]);
    expect(composed.supergraphSdl).toBe(linked.supergraphSdl);
  });

  it('leaves a Federation 1 subgraph using @inaccessible (or @tag) as Federation 1, where fields may be shared without @shareable', () => {
    const composed = composeSubgraphs([
      { name: 'a', url: 'http://127.0.0.1:4001/graphql', sdl: 'type Query { a: Money c: Int @inaccessible } type Money { amount: Int @tag(name: "x") }' },
      { name: 'b', url: 'http://127.0.0.1:4002/graphql', sdl: 'type Query { b: Money } type Money { amount: Int }' },
    ]);
    expect(composed.supergraphSdl).toContain('amount: Int');
  });
});
