/**
 * `switchyard compose` as a real process (cli-harness.ts) with a gRPC
 * subgraph: a message lacking a field of its GraphQL type is refused, as the
 * router refuses it when it loads the graph, with the exit code of other
 * composition errors and no output file; a generated subgraph still composes.
 */
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { writeServiceFiles } from '../../src/grpc/service-files.js';
import { tempDir } from '../grpc/support.js';
import { type HarnessRun, runHarness } from '../support/run-harness.js';

const HARNESS = fileURLToPath(new URL('./cli-harness.ts', import.meta.url));

const PROJECTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
  type Project @key(fields: "id") {
    id: ID!
    name: String!
    createdAt: String
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
    routing_url: dns:///127.0.0.1:50051
    grpc:
      schema_file: ./projects/schema.graphql
      proto_file: ./projects/proto/service.proto
      mapping_file: ./projects/proto/mapping.json
  - name: teams
    routing_url: http://127.0.0.1:4002/graphql
    schema:
      file: ./teams.graphql
`;

const HINT = '(regenerate service.proto and mapping.json from the schema, and recompose)';

function switchyard(args: string[], cwd: string): Promise<HarnessRun> {
  return runHarness(HARNESS, args, { cwd, env: { ...process.env, LOG_LEVEL: 'info' } });
}

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

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** Replaces `from` with `to` in `file`, checking that it was there. */
async function edit(file: string, from: string, to: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  expect(text).toContain(from);
  await writeFile(file, text.replace(from, to));
}

// Each test starts a real process (node + tsx): run them side by side, with room for a busy machine.
describe.concurrent('switchyard compose with a gRPC subgraph', { timeout: 60_000 }, () => {
  it('composes a generated subgraph, writes the execution config and exits 0', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const run = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', 'router.execution.config.json'], dir);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe('wrote execution config to router.execution.config.json (2 subgraphs: projects, teams)\n');
    const config = JSON.parse(await readFile(join(dir, 'router.execution.config.json'), 'utf8')) as { subgraphs: { kind: string; name: string }[] };
    expect(config.subgraphs.map(({ kind, name }) => `${kind} ${name}`)).toEqual(['grpc projects', 'graphql teams']);
  });

  it('refuses a proto whose message lacks a field of its GraphQL type, naming subgraph, type, field and message; exits 1 and writes nothing', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    const protoFile = join(dir, 'projects/proto/service.proto');
    await edit(protoFile, '  google.protobuf.StringValue created_at = 3;\n', '');
    for (const output of ['router.execution.config.json', 'supergraph.graphql']) {
      const run = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', output], dir);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(/^error: cannot compose .*router\.compose\.yaml:$/),
        `error: subgraph "projects": ${protoFile}: message Project has no field created_at for Project.createdAt ${HINT}`,
      ]);
      expect(run.stderr).not.toContain('    at ');
      expect(await exists(join(dir, output))).toBe(false);
    }
  });

  it('refuses a schema given a field after the proto was generated (the proto and mapping are stale)', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    await edit(join(dir, 'projects/schema.graphql'), '    createdAt: String\n', '    createdAt: String\n    ownerEmail: String\n');
    const run = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', 'router.execution.config.json'], dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `error: subgraph "projects": ${join(dir, 'projects/proto/service.proto')}: message Project has no field owner_email for Project.ownerEmail ${HINT}`,
    );
    expect(await exists(join(dir, 'router.execution.config.json'))).toBe(false);
  });

  it('looks fields up by the proto name mapping.json gives them', async ({ onTestFinished }) => {
    const dir = await project(onTestFinished);
    // The proto field renamed, and the mapping with it: the router reads created_on, so compose accepts it.
    await edit(join(dir, 'projects/proto/service.proto'), 'created_at = 3;', 'created_on = 3;');
    await edit(join(dir, 'projects/proto/mapping.json'), '"mapped": "created_at"', '"mapped": "created_on"');
    const accepted = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', 'router.execution.config.json'], dir);
    expect(accepted).toMatchObject({ code: 0, stderr: '' });
    // The mapping alone changed: the message has no field of that name.
    await edit(join(dir, 'projects/proto/mapping.json'), '"mapped": "created_on"', '"mapped": "creation_time"');
    const refused = await switchyard(['compose', '-i', 'router.compose.yaml', '-o', 'out.json'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('message Project has no field creation_time for Project.createdAt');
    expect(await exists(join(dir, 'out.json'))).toBe(false);
  });
});
