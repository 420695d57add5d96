import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeGraph, writeOutput } from '../../src/compose/index.js';
import { writeServiceFiles } from '../../src/grpc/service-files.js';
import { RouterError, readGraphSource, type ExecutionConfig } from '../../src/index.js';
import { parseGraphSource } from '../../src/kernel/graph/execution-config.js';
import { tempDir } from './support.js';

const PROJECTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  type Project @key(fields: "id") {
    id: ID!
    name: String!
  }
  type Query {
    projects: [Project!]!
  }
`;

const TEAMS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  type Project @key(fields: "id") {
    id: ID!
    team: String!
  }
`;

const COMPOSE = `version: 1
subgraphs:
  - name: projects
    routing_url: dns:///localhost:50051
    grpc:
      schema_file: ./projects/schema.graphql
      proto_file: ./projects/proto/service.proto
      mapping_file: ./projects/proto/mapping.json
  - name: teams
    routing_url: http://localhost:4002/graphql
    schema:
      file: ./teams.graphql
`;

/** A folder with a generated gRPC subgraph, an SDL subgraph and a compose file. */
async function project(onTestFinished: (fn: () => Promise<void>) => void): Promise<string> {
  const dir = await tempDir(onTestFinished);
  await mkdir(join(dir, 'projects'));
  await writeFile(join(dir, 'projects/schema.graphql'), PROJECTS_SDL);
  await writeServiceFiles({ schemaFile: join(dir, 'projects/schema.graphql'), outDir: join(dir, 'projects/proto') });
  await writeFile(join(dir, 'teams.graphql'), TEAMS_SDL);
  await writeFile(join(dir, 'router.compose.yaml'), COMPOSE);
  return dir;
}

async function composeFailure(file: string): Promise<RouterError> {
  try {
    await composeGraph(file);
  } catch (error) {
    if (error instanceof RouterError) return error;
    throw error;
  }
  throw new Error('expected composition to fail');
}

describe('composing a gRPC subgraph', () => {
  it('writes subgraph kind grpc with its schema, proto and mapping embedded, and the router reads it back', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const output = join(dir, 'router.execution.config.json');
    await writeOutput(output, await composeGraph(join(dir, 'router.compose.yaml')));
    const config = JSON.parse(await readFile(output, 'utf8')) as ExecutionConfig;
    const proto = await readFile(join(dir, 'projects/proto/service.proto'), 'utf8');
    const mapping = JSON.parse(await readFile(join(dir, 'projects/proto/mapping.json'), 'utf8')) as Record<string, unknown>;
    expect(config.subgraphs).toEqual([
      { kind: 'grpc', name: 'projects', url: 'dns:///localhost:50051', sdl: PROJECTS_SDL, proto, mapping },
      { kind: 'graphql', name: 'teams', url: 'http://localhost:4002/graphql' },
    ]);
    expect(config.supergraph).toContain('PROJECTS @join__graph(name: "projects", url: "dns:///localhost:50051")');
    const source = await readGraphSource(output);
    expect(source.subgraphs).toEqual(config.subgraphs);
  });

  it('refuses a mapping older than the schema, naming the root fields without an RPC', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    await writeFile(join(dir, 'projects/schema.graphql'), PROJECTS_SDL.replace('projects: [Project!]!', 'projects: [Project!]!\n    project(id: ID!): Project'));
    const error = await composeFailure(join(dir, 'router.compose.yaml'));
    expect(error.code).toBe('COMPOSITION_FAILED');
    expect(error.message).toBe(
      `cannot compose ${join(dir, 'router.compose.yaml')}:\nsubgraph "projects": ${join(dir, 'projects/proto/mapping.json')} is older than ${join(dir, 'projects/schema.graphql')}: no RPC for Query.project (run \`switchyard grpc-service generate\` again)`,
    );
  });

  it('refuses a proto and mapping that do not belong together, and files that are missing', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const mappingFile = join(dir, 'projects/proto/mapping.json');
    const mapping = JSON.parse(await readFile(mappingFile, 'utf8')) as Record<string, unknown>;
    await writeFile(mappingFile, JSON.stringify({ ...mapping, service: 'OtherService' }));
    const wrongService = await composeFailure(join(dir, 'router.compose.yaml'));
    expect(wrongService.message).toContain(`subgraph "projects": ${mappingFile} names service "OtherService", which ${join(dir, 'projects/proto/service.proto')} does not define`);
    await writeFile(mappingFile, '{"version": 1}');
    expect((await composeFailure(join(dir, 'router.compose.yaml'))).message).toContain(`subgraph "projects": ${mappingFile}: not a gRPC mapping: service: `);
    await writeFile(join(dir, 'projects/proto/service.proto'), 'syntax = "proto3"; message {');
    await writeFile(mappingFile, JSON.stringify(mapping));
    expect((await composeFailure(join(dir, 'router.compose.yaml'))).message).toContain(`subgraph "projects": ${join(dir, 'projects/proto/service.proto')}: `);
    await writeFile(join(dir, 'router.compose.yaml'), COMPOSE.replace('./projects/proto/mapping.json', './nowhere/mapping.json'));
    expect((await composeFailure(join(dir, 'router.compose.yaml'))).message).toContain(
      `subgraph "projects": mapping file not found: ${join(dir, 'nowhere/mapping.json')} (run \`switchyard grpc-service generate\` first)`,
    );
  });

  it('refuses a gRPC routing_url that is not a gRPC target', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    await writeFile(join(dir, 'router.compose.yaml'), COMPOSE.replace('dns:///localhost:50051', 'http://localhost:50051'));
    const error = await composeFailure(join(dir, 'router.compose.yaml'));
    expect([error.code, error.message]).toEqual([
      'CONFIG_INVALID',
      `${join(dir, 'router.compose.yaml')}: subgraphs[0] ("projects").routing_url: must be a gRPC target for a grpc subgraph, e.g. dns:///localhost:50051`,
    ]);
  });
});

describe('reading grpc records of an execution config', () => {
  const composedProject = async (onTestFinished: (fn: () => Promise<void>) => void) => {
    const dir = await project(onTestFinished);
    return composeGraph(join(dir, 'router.compose.yaml'));
  };

  it('refuses a grpc record without its proto, mapping or schema, or with a URL that is no gRPC target', async ({ onTestFinished }) => {
    const graph = await composedProject(onTestFinished);
    const [grpc, teams] = graph.subgraphs;
    const read = (record: Record<string, unknown>) => {
      try {
        parseGraphSource(JSON.stringify({ version: 1, supergraph: graph.supergraphSdl, subgraphs: [record, teams] }), 'graph.json');
      } catch (error) {
        return (error as RouterError).message;
      }
      return 'accepted';
    };
    expect(read({ ...grpc })).toBe('accepted');
    expect(read({ ...grpc, proto: undefined })).toBe('graph.json: subgraph "projects": proto: required, the text of service.proto');
    expect(read({ ...grpc, sdl: '' })).toBe('graph.json: subgraph "projects": sdl: required, the subgraph\'s GraphQL schema');
    expect(read({ ...grpc, mapping: { version: 1 } })).toBe('graph.json: subgraph "projects": mapping: required, the content of mapping.json (an object naming its "service")');
    expect(read({ ...grpc, url: 'http://localhost:50051' })).toBe('graph.json: subgraph "projects": url: required, a gRPC target such as dns:///localhost:50051');
    for (const url of ['dns:///localhost:50051', 'localhost:50051', 'dns:localhost:50051', 'ipv4:127.0.0.1:50051', 'ipv6:[::1]:50051', 'unix:///tmp/service.sock']) {
      expect(read({ ...grpc, url })).toBe('accepted');
    }
  });

  it('points a plain supergraph SDL with a gRPC routing URL to the execution config', async ({ onTestFinished }) => {
    const graph = await composedProject(onTestFinished);
    expect(() => parseGraphSource(graph.supergraphSdl, 'supergraph.graphql')).toThrow(
      'supergraph.graphql: subgraph "projects": routing URL "dns:///localhost:50051" is not an http(s) URL (a gRPC subgraph needs its proto and mapping: serve the execution config written by `switchyard compose -o router.execution.config.json`)',
    );
  });
});
