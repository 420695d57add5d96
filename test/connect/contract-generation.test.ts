import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { writeContractFiles } from '../../src/connect/index.js';
import { RouterError } from '../../src/index.js';
import { bufLint } from '../plugins/connect/buf.js';
import { PROJECT_OPERATIONS, PROJECTS_SDL, tempDir, writeContract } from '../plugins/connect/fixtures.js';
import { composeSubgraphs } from '../../src/compose/index.js';
import { readSupergraph } from '../../src/kernel/graph/read-supergraph.js';
import { USERS_SDL } from '../plugins/connect/fixtures.js';

/** The client-facing schema of the fixtures' graph (no subgraph needs to run to generate). */
function apiSchema() {
  const composed = composeSubgraphs([
    { name: 'projects', url: 'http://127.0.0.1:1/graphql', sdl: PROJECTS_SDL },
    { name: 'users', url: 'http://127.0.0.1:2/graphql', sdl: USERS_SDL },
  ]);
  return readSupergraph(composed.supergraphSdl).apiSchema;
}

/** buf's STANDARD rules, as a project using the contract would lint it. */
const BUF_YAML = 'version: v2\nlint:\n  use:\n    - STANDARD\n';

async function refusal(dir: string, files: Record<string, string>): Promise<{ code: string; message: string }> {
  const error = await writeContract(dir, files, apiSchema()).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(RouterError);
  const { code, message } = error as RouterError;
  return { code, message: message.replace(`${dir}/`, '') };
}

describe('Contract generation (grpc-service generate --with-operations)', () => {
  it('writes a proto service named after the folder, one RPC per operation, queries marked NO_SIDE_EFFECTS, that buf lint accepts', async ({ onTestFinished }) => {
    const root = await tempDir(onTestFinished);
    const written = await writeContract(join(root, 'projects', 'v1'), PROJECT_OPERATIONS, apiSchema());
    expect({ packageName: written.packageName, serviceName: written.serviceName, methods: written.methods }).toEqual({
      packageName: 'projects.v1',
      serviceName: 'ProjectsService',
      methods: ['CreateProject', 'Failing', 'GetProject', 'GetProjectNote', 'ListProjects', 'Search'],
    });
    const proto = await readFile(written.files.proto, 'utf8');
    expect(proto).toContain('package projects.v1;');
    expect(proto).toContain('  rpc CreateProject(CreateProjectRequest) returns (CreateProjectResponse) {}\n');
    expect(proto).toContain('  rpc GetProject(GetProjectRequest) returns (GetProjectResponse) {\n    option idempotency_level = NO_SIDE_EFFECTS;\n  }\n');
    // Nested selections are messages scoped inside the response message; the fragment is inlined.
    expect(proto).toMatch(/message GetProjectResponse \{\n {2}message Project \{\n {4}message Owner \{\n {6}string id = 1;\n {6}string name = 2;\n {4}\}/);
    expect(proto).toContain('    google.protobuf.StringValue description = 5;');
    expect(proto).toContain('  repeated Projects projects = 1;');
    expect(proto).toContain('enum ProjectStatus {\n  PROJECT_STATUS_UNSPECIFIED = 0;\n  PROJECT_STATUS_ACTIVE = 1;');
    await writeFile(join(root, 'buf.yaml'), BUF_YAML);
    expect(await bufLint(root)).toEqual({ code: 0, output: '' });
  });

  it('writes an OpenAPI 3.1 document a validator accepts: POST for every RPC, GET for queries, the Connect header and error schema', async ({ onTestFinished }) => {
    const root = await tempDir(onTestFinished);
    const written = await writeContract(join(root, 'projects', 'v1'), PROJECT_OPERATIONS, apiSchema());
    const document = JSON.parse(await readFile(written.files.openapi, 'utf8')) as {
      openapi: string;
      servers: unknown;
      paths: Record<string, Record<string, { operationId: string; parameters: Array<{ $ref?: string; name?: string }> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }>; parameters: Record<string, unknown> };
    };
    const validator = new Validator();
    const result = await validator.validate(document);
    expect({ valid: result.valid, errors: result.errors, version: validator.version }).toEqual({ valid: true, errors: undefined, version: '3.1' });

    expect(document.servers).toEqual([{ url: 'http://localhost:5026' }]);
    const methods = Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [path, Object.keys(item)]));
    expect(methods).toEqual({
      '/projects.v1.ProjectsService/CreateProject': ['post'],
      '/projects.v1.ProjectsService/Failing': ['get', 'post'],
      '/projects.v1.ProjectsService/GetProject': ['get', 'post'],
      '/projects.v1.ProjectsService/GetProjectNote': ['get', 'post'],
      '/projects.v1.ProjectsService/ListProjects': ['get', 'post'],
      '/projects.v1.ProjectsService/Search': ['get', 'post'],
    });
    const getProject = document.paths['/projects.v1.ProjectsService/GetProject']!;
    expect(getProject.post!.operationId).toBe('projects.v1.ProjectsService.GetProject');
    expect(getProject.post!.parameters[0]).toEqual({ $ref: '#/components/parameters/connect-protocol-version' });
    expect(getProject.get!.parameters.map((p) => p.$ref ?? p.name)).toEqual([
      '#/components/parameters/connect',
      '#/components/parameters/encoding',
      'message',
      '#/components/parameters/connect-timeout-ms',
    ]);
    expect(document.components.parameters['connect-protocol-version']).toEqual(expect.objectContaining({ name: 'Connect-Protocol-Version', in: 'header', required: true }));
    expect(Object.keys(document.components.schemas['connect.error']!.properties!)).toEqual(['code', 'message', 'details']);
    expect(document.components.schemas['projects.v1.GetProjectRequest']).toEqual(expect.objectContaining({ properties: { id: expect.objectContaining({ type: 'string' }) } }));
  });

  it('keeps field numbers across regenerations through the lock file', async ({ onTestFinished }) => {
    const dir = join(await tempDir(onTestFinished), 'projects', 'v1');
    await writeContract(dir, { 'ListProjects.graphql': 'query ListProjects { projects { id name status } }' }, apiSchema());
    await writeFile(join(dir, 'ListProjects.graphql'), 'query ListProjects { projects { id tags status } }');
    const written = await writeContractFiles({ dir, schema: apiSchema() });
    const proto = await readFile(written.files.proto, 'utf8');
    // `name` left: its number is not given to another field; `tags` gets a new one.
    expect(proto).toMatch(/message Projects \{\n {4}string id = 1;\n {4}ProjectStatus status = 3;\n {4}repeated string tags = 4;\n {2}\}/);
  });

  it('refuses anonymous operations, names that are not PascalCase, aliased root fields, two operations in a file and subscriptions', async ({ onTestFinished }) => {
    const root = await tempDir(onTestFinished);
    const cases: Array<[string, string, string]> = [
      ['a', 'query { projects { id } }', 'Op.graphql: the operation is anonymous; name it (for example "query GetProject(...)"): its name becomes the RPC name'],
      [
        'b',
        'query get_projects { projects { id } }',
        'Op.graphql: operation name "get_projects" must be PascalCase (a capital letter, then letters and digits), for example "GetProjects"',
      ],
      [
        'c',
        'query AllProjects { all: projects { id } }',
        'Op.graphql: AllProjects aliases the root field "projects" as "all"; root fields become response message fields and cannot be aliased',
      ],
      ['d', 'query A { failing } query B { failing }', 'Op.graphql: holds 2 operations (A, B); put each operation in a file of its own'],
      ['e', 'subscription Watch { failing }', 'Op.graphql: Watch is a subscription; contracts serve queries and mutations only'],
      ['f', 'query Broken {', 'Op.graphql: not a valid GraphQL document: Syntax Error: Expected Name, found <EOF>.'],
    ];
    for (const [folder, text, message] of cases) {
      const dir = join(root, folder, 'v1');
      expect(await refusal(dir, { 'Op.graphql': text })).toEqual({ code: 'CONNECT_CONTRACT_INVALID', message });
    }
  });

  it('refuses an operation that does not validate against the schema, naming it', async ({ onTestFinished }) => {
    const dir = join(await tempDir(onTestFinished), 'projects', 'v1');
    const { code, message } = await refusal(dir, { 'GetProject.graphql': 'query GetProject { project(id: "1") { id colour } }' });
    expect(code).toBe('CONNECT_CONTRACT_INVALID');
    expect(message).toContain('colour');
  });
});
