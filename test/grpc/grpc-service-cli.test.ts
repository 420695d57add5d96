import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { writeServiceFiles } from '../../src/grpc/service-files.js';
import { initProject } from '../../src/grpc/templates.js';
import { switchyard, tempDir } from './support.js';

const run = promisify(execFile);
const BUF = join(import.meta.dirname, '../../node_modules/.bin/buf');

async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

describe('switchyard grpc-service', () => {
  it('lists the typescript and go templates, one line each', async ({ onTestFinished }) => {
    const result = await switchyard(['grpc-service', 'list-templates'], await tempDir(onTestFinished));
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').map((line) => line.split(/\s+/)[0])).toEqual(['typescript', 'go']);
    expect(result.stdout).toMatch(/^typescript {2}TypeScript service on Connect RPC/);
  });

  it('writes the TypeScript project: schema, build scripts, compose and router config', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const result = await switchyard(['grpc-service', 'init', '--template', 'typescript', '--directory', 'My Service'], dir);
    expect(result).toEqual({
      code: 0,
      stdout: 'created a typescript gRPC service in My Service (16 files)\nnext:\n  cd My Service\n  npm install\n  npm run bootstrap\n  npm start\nthen open http://localhost:3002 (README.md has the details)\n',
      stderr: '',
    });
    const project = join(dir, 'My Service');
    expect(await files(project)).toEqual([
      '.gitignore',
      'README.md',
      'buf.gen.yaml',
      'buf.yaml',
      'package.json',
      'router.compose.yaml',
      'router.config.yaml',
      'scripts/start.mjs',
      'services/projects/v1/CreateProject.graphql',
      'services/projects/v1/GetProject.graphql',
      'services/projects/v1/ListProjects.graphql',
      'services/projects/v1/UpdateProject.graphql',
      'src/graph/schema.graphql',
      'src/index.ts',
      'src/service.ts',
      'tsconfig.json',
    ].sort());
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { name: string; scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(manifest.name).toBe('my-service');
    expect(manifest.dependencies.switchyard).toBe('^0.1.0');
    expect(manifest.scripts.bootstrap).toBe('npm run generate');
    expect(manifest.scripts['generate:proto']).toBe('switchyard grpc-service generate -i ./src/graph/schema.graphql -o ./proto/service/v1 --with-operations ./services/projects/v1');
    const schema = await readFile(join(project, 'src/graph/schema.graphql'), 'utf8');
    for (const text of ['getProject(id: ID!): Project', 'listProjects: [Project!]!', 'createProject(input: CreateProjectInput!): Project!', 'updateProject(id: ID!, input: UpdateProjectInput!): Project!', 'enum ProjectStatus']) {
      expect(schema).toContain(text);
    }
    expect(await readFile(join(project, 'router.compose.yaml'), 'utf8')).toContain('routing_url: dns:///localhost:50051');
    expect(await readFile(join(project, 'router.config.yaml'), 'utf8')).toContain('listen_addr: "localhost:3002"');
  });

  it('refuses a non-empty directory unless --force, and an unknown template', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    await mkdir(join(dir, 'taken'));
    await writeFile(join(dir, 'taken', 'notes.txt'), 'mine');
    const refused = await switchyard(['grpc-service', 'init', '--template', 'typescript', '--directory', 'taken'], dir);
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: ${join(dir, 'taken')} is not empty; choose an empty or new directory, or pass --force to write into it\n`,
    });
    expect(await files(join(dir, 'taken'))).toEqual(['notes.txt']);
    const forced = await initProject({ template: 'typescript', directory: join(dir, 'taken'), force: true });
    expect(forced.files).toHaveLength(16);
    expect(await files(join(dir, 'taken'))).toContain('notes.txt');
    expect(await files(join(dir, 'taken'))).toContain('src/service.ts');
    const unknown = await switchyard(['grpc-service', 'init', '--template', 'rust', '--directory', 'x'], dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("error: option '-t, --template <name>' argument 'rust' is invalid. Allowed choices are typescript, go.");
  });

  it('writes the Go project, whose make targets generate a valid proto (it is built on the user’s machine)', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const project = join(dir, 'projects');
    await initProject({ template: 'go', directory: project });
    expect(await files(project)).toEqual(
      ['.gitignore', 'Makefile', 'README.md', 'buf.gen.yaml', 'buf.yaml', 'cmd/service/main.go', 'go.mod', 'package.json', 'pkg/graph/schema.graphql', 'pkg/service/service.go', 'router.compose.yaml', 'router.config.yaml'].sort(),
    );
    const makefile = await readFile(join(project, 'Makefile'), 'utf8');
    for (const target of ['install-tools', 'bootstrap', 'generate', 'generate-proto', 'generate-buf', 'compose', 'build', 'test', 'service', 'router', 'start']) {
      expect(makefile).toMatch(new RegExp(`^${target}:`, 'm'));
    }
    expect(await readFile(join(project, 'go.mod'), 'utf8')).toMatch(/^module example\.com\/projects\n/);
    expect(await readFile(join(project, 'cmd/service/main.go'), 'utf8')).toContain('"example.com/projects/pkg/generated/service/v1/servicev1connect"');
    expect(await readFile(join(project, 'buf.gen.yaml'), 'utf8')).toContain('value: example.com/projects/pkg/generated');
    // What `make generate-proto` runs, then the `buf lint` of `make generate-buf`.
    const generate = /^generate-proto:\n\t\$\(SWITCHYARD\) grpc-service generate -i (\S+) -o (\S+)$/m.exec(makefile);
    expect(generate?.slice(1)).toEqual(['./pkg/graph/schema.graphql', './pkg/proto/service/v1']);
    await writeServiceFiles({ schemaFile: join(project, generate![1]!), outDir: join(project, generate![2]!) });
    await expect(run(BUF, ['lint'], { cwd: project })).resolves.toEqual({ stdout: '', stderr: '' });
    const proto = await readFile(join(project, 'pkg/proto/service/v1/service.proto'), 'utf8');
    for (const rpc of ['QueryGetProject', 'QueryListProjects', 'MutationCreateProject', 'MutationUpdateProject']) expect(proto).toContain(`rpc ${rpc}(${rpc}Request) returns (${rpc}Response)`);
    expect(proto).toContain('PROJECT_STATUS_ARCHIVED = 3;');
  });

  it('generates the three files, and fails with exit codes for bad input', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    await writeFile(join(dir, 'schema.graphql'), 'type Query { hello(name: String!): String! }');
    const ok = await switchyard(['grpc-service', 'generate', '-i', 'schema.graphql', '-o', 'out', '-p', 'greeter.v1'], dir);
    expect(ok).toEqual({ code: 0, stdout: 'wrote out/service.proto, out/mapping.json, out/service.proto.lock.json (package greeter.v1, service GreeterService)\n', stderr: '' });
    expect(await readFile(join(dir, 'out/service.proto'), 'utf8')).toContain('rpc QueryHello(QueryHelloRequest) returns (QueryHelloResponse) {}');

    const badPackage = await switchyard(['grpc-service', 'generate', '-i', 'schema.graphql', '-o', 'out', '-p', 'greeter'], dir);
    expect(badPackage.code).toBe(2);
    expect(badPackage.stderr).toContain(`error: option '-p, --package-name <package>' argument 'greeter' is invalid. "greeter" has no version segment`);
    const missing = await switchyard(['grpc-service', 'generate', '-i', 'nope.graphql', '-o', 'out'], dir);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: `error: schema ${join(dir, 'nope.graphql')}: file not found\n` });
    const noOutput = await switchyard(['grpc-service', 'generate', '-i', 'schema.graphql'], dir);
    expect(noOutput.code).toBe(2);
    expect(noOutput.stderr).toContain("error: required option '-o, --output <dir>' not specified");
  });

  it('names a --with-operations folder that does not exist', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    await writeFile(join(dir, 'schema.graphql'), 'type Query { hello: String }');
    const result = await switchyard(['grpc-service', 'generate', '-i', 'schema.graphql', '-o', 'out', '--with-operations', 'ops'], dir);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `error: operations folder ${join(dir, 'ops')}: no such folder\n` });
  });
});
