import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** Runs `tasks` (each starts a CLI process) at most `limit` at a time; their results in order. */
async function pooled<T>(tasks: ReadonlyArray<() => Promise<T>>, limit = 4): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}

describe('switchyard grpc-service', () => {
  it('lists the typescript and go templates, one line each, with Cosmo’s names for them', async ({ onTestFinished }) => {
    const result = await switchyard(['grpc-service', 'list-templates'], await tempDir(onTestFinished));
    expect(result.code).toBe(0);
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[0]),
    ).toEqual(['typescript', 'go']);
    expect(result.stdout).toMatch(/^typescript {2}TypeScript service on Connect RPC.* \(also as typescript-connect-rpc-fastify, Cosmo's name\)$/m);
    expect(result.stdout).toMatch(/^go {10}Go service on Connect RPC.* \(also as golang-connect-rpc, Cosmo's name\)$/m);
  });

  it('writes a template asked for by Cosmo’s name, as `wgc grpc-service init --template` names it', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const result = await switchyard(['grpc-service', 'init', '--template', 'golang-connect-rpc', '--directory', 'svc'], dir);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^created a go gRPC service in svc \(12 files\)\n/);
    expect(await files(join(dir, 'svc'))).toContain('Makefile');
    const ts = await initProject({ template: 'typescript-connect-rpc-fastify', directory: join(dir, 'ts') });
    expect(ts.template.name).toBe('typescript');
  });

  it('writes the TypeScript project: schema, build scripts, compose and router config', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const result = await switchyard(['grpc-service', 'init', '--template', 'typescript', '--directory', 'My Service'], dir);
    expect(result).toEqual({
      code: 0,
      stdout:
        'created a typescript gRPC service in My Service (16 files)\nnext:\n  cd My Service\n  npm install\n  npm run bootstrap\n  npm start\nthen open http://localhost:3002 (README.md has the details)\n',
      stderr: '',
    });
    const project = join(dir, 'My Service');
    expect(await files(project)).toEqual(
      [
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
      ].sort(),
    );
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { name: string; scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(manifest.name).toBe('my-service');
    // Never a version range: the npm registry's "switchyard" is an unrelated package.
    expect(manifest.dependencies.switchyard).toBe(`file:${resolve(dirname(fileURLToPath(import.meta.url)), '../..')}`);
    expect(manifest.scripts.bootstrap).toBe('npm run generate');
    expect(manifest.scripts['generate:proto']).toBe(
      'switchyard grpc-service generate -i ./src/graph/schema.graphql -o ./proto/service/v1 --connect-contract ./services/projects/v1',
    );
    const schema = await readFile(join(project, 'src/graph/schema.graphql'), 'utf8');
    for (const text of [
      'getProject(id: ID!): Project',
      'listProjects: [Project!]!',
      'createProject(input: CreateProjectInput!): Project!',
      'updateProject(id: ID!, input: UpdateProjectInput!): Project!',
      'enum ProjectStatus',
    ]) {
      expect(schema).toContain(text);
    }
    expect(await readFile(join(project, 'router.compose.yaml'), 'utf8')).toContain('routing_url: dns:///localhost:50051');
    expect(await readFile(join(project, 'router.config.yaml'), 'utf8')).toContain('listen_addr: "localhost:3002"');
  });

  it('refuses a non-empty directory unless --force, and an unknown template', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    await mkdir(join(dir, 'taken'));
    await writeFile(join(dir, 'taken', 'notes.txt'), 'mine');
    // Independent: the unknown template is refused before anything is written.
    const [refused, unknown] = await Promise.all([
      switchyard(['grpc-service', 'init', '--template', 'typescript', '--directory', 'taken'], dir),
      switchyard(['grpc-service', 'init', '--template', 'rust', '--directory', 'x'], dir),
    ]);
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
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "error: option '-t, --template <name>' argument 'rust' is invalid. Allowed choices are typescript, go, typescript-connect-rpc-fastify, golang-connect-rpc.",
    );
  });

  it('writes the Go project, whose make targets generate a valid proto (it is built on the user’s machine)', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const project = join(dir, 'projects');
    await initProject({ template: 'go', directory: project });
    expect(await files(project)).toEqual(
      [
        '.gitignore',
        'Makefile',
        'README.md',
        'buf.gen.yaml',
        'buf.yaml',
        'cmd/service/main.go',
        'go.mod',
        'package.json',
        'pkg/graph/schema.graphql',
        'pkg/service/service.go',
        'router.compose.yaml',
        'router.config.yaml',
      ].sort(),
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
    for (const rpc of ['QueryGetProject', 'QueryListProjects', 'MutationCreateProject', 'MutationUpdateProject'])
      expect(proto).toContain(`rpc ${rpc}(${rpc}Request) returns (${rpc}Response)`);
    expect(proto).toContain('PROJECT_STATUS_ARCHIVED = 3;');
  });

  it('generates the three files, named by the positional argument or after the package, and fails with exit codes for bad input', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    await writeFile(join(dir, 'schema.graphql'), 'type Query { hello(name: String!): String! }');
    const generate = (...args: string[]) => switchyard(['grpc-service', 'generate', ...args], dir);
    // The two that write (into different folders) side by side, then the refusals side by side: each refusal
    // still finds what the writing runs left (the lock in out/), as when they ran one after another.
    const [ok, named] = await Promise.all([
      generate('-i', 'schema.graphql', '-o', 'out', '-p', 'greeter.v1'),
      generate('-i', 'schema.graphql', '-p', 'greeter', 'greeter-service'),
    ]);
    expect(ok).toEqual({ code: 0, stdout: 'wrote out/service.proto, out/mapping.json, out/service.proto.lock.json (package greeter.v1, service GreeterService)\n', stderr: '' });
    expect(await readFile(join(dir, 'out/service.proto'), 'utf8')).toContain('rpc QueryHello(QueryHelloRequest) returns (QueryHelloResponse) {}');
    expect(named).toEqual({ code: 0, stdout: 'wrote service.proto, mapping.json, service.proto.lock.json (package greeter, service GreeterService)\n', stderr: '' });

    await writeFile(join(dir, 'broken.lock.json'), '{"version":');
    await writeFile(join(dir, 'file'), '');
    const [badPackage, badName, missing, noInput, noLock, brokenLock, goPackage, notDir] = await pooled([
      () => generate('-i', 'schema.graphql', '-o', 'out', '-p', 'greeter v1'),
      () => generate('-i', 'schema.graphql', '-o', 'out', '2fast'),
      () => generate('-i', 'nope.graphql', '-o', 'out'),
      () => generate('-o', 'out'),
      () => generate('-i', 'schema.graphql', '-o', 'out', '-l', 'old.lock.json'),
      () => generate('-i', 'schema.graphql', '-o', 'out', '-l', 'broken.lock.json'),
      () => generate('-i', 'schema.graphql', '-o', 'out', '-g', 'a b'),
      () => generate('-i', 'schema.graphql', '-o', 'file'),
    ]);
    expect(badPackage!.code).toBe(2);
    expect(badPackage!.stderr).toContain(`error: option '-p, --package-name <package>' argument 'greeter v1' is invalid. "greeter v1" is not a proto package`);
    expect(badName!.code).toBe(2);
    expect(badName!.stderr).toContain(`error: command-argument value '2fast' is invalid for argument 'name'. "2fast" does not make a proto service name`);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: `error: schema ${join(dir, 'nope.graphql')}: file not found\n` });
    expect(noInput!.code).toBe(2);
    expect(noInput!.stderr).toContain("error: required option '-i, --input <schema.graphql>' not specified");
    expect(noLock).toEqual({ code: 1, stdout: '', stderr: `error: lock ${join(dir, 'old.lock.json')}: file not found\n` });
    expect(brokenLock!.stderr).toBe(`error: ${join(dir, 'broken.lock.json')}: not valid JSON (delete it to renumber every field, which breaks existing clients)\n`);
    expect(goPackage).toEqual({ code: 1, stdout: '', stderr: 'error: go package "a b" must be a non-empty Go import path without quotes, backslashes or spaces\n' });
    expect(notDir).toEqual({ code: 1, stdout: '', stderr: `error: output ${join(dir, 'file')} is not a directory\n` });
  });

  it('--with-operations: refuses a missing or empty folder, a broken operation, bad scalar mappings and depths, and writes nothing', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    await writeFile(join(dir, 'schema.graphql'), 'type Query { hello(name: String!): String! }');
    const generate = (...args: string[]) => switchyard(['grpc-service', 'generate', '-i', 'schema.graphql', '-o', 'out', ...args], dir);
    // Each refusal on its own folder state (a missing folder, one with no operation file, one with a broken
    // operation), so the refusals run side by side.
    await mkdir(join(dir, 'empty', 'nested'), { recursive: true });
    await writeFile(join(dir, 'empty', 'notes.txt'), 'not an operation');
    await mkdir(join(dir, 'ops', 'nested'), { recursive: true });
    await writeFile(join(dir, 'ops', 'notes.txt'), 'not an operation');
    await writeFile(join(dir, 'ops', 'nested', 'Bad.gql'), 'query Bad { goodbye }');
    const [absent, empty, broken, badJson, notMap, both, depth, noFile] = await pooled([
      () => generate('--with-operations', 'absent'),
      () => generate('-w', 'empty'),
      () => generate('-w', 'ops'),
      () => generate('-w', 'ops', '--custom-scalar-mapping', '{"DateTime":'),
      () => generate('-w', 'ops', '--custom-scalar-mapping', '["x"]'),
      () => generate('-w', 'ops', '--custom-scalar-mapping', '{}', '--custom-scalar-mapping-file', 'm.json'),
      () => generate('-w', 'ops', '--max-depth', '0'),
      () => generate('-w', 'ops', '--custom-scalar-mapping-file', 'm.json'),
    ]);
    expect(absent).toEqual({ code: 1, stdout: '', stderr: `error: operations folder ${join(dir, 'absent')}: no such folder\n` });
    expect(empty!.stderr).toBe(`error: operations folder ${join(dir, 'empty')}: no operation files (.graphql, .gql, .graphqls, .gqls)\n`);
    expect(broken!.code).toBe(1);
    expect(broken!.stderr).toBe(`error: ${join(dir, 'ops', 'nested', 'Bad.gql')}: does not validate against the schema: Cannot query field "goodbye" on type "Query".\n`);
    expect(badJson!.code).toBe(2);
    expect(badJson!.stderr).toContain('--custom-scalar-mapping is not JSON');
    expect(notMap!.stderr).toContain('--custom-scalar-mapping must be a JSON object of scalar name -> proto type');
    expect(both!.code).toBe(2);
    expect(both!.stderr).toContain("cannot be used with option '--custom-scalar-mapping-file");
    expect(depth!.code).toBe(2);
    expect(depth!.stderr).toContain('must be a positive integer, not "0"');
    expect(noFile).toEqual({ code: 1, stdout: '', stderr: `error: custom scalar mapping file ${join(dir, 'm.json')}: file not found\n` });
    expect(await files(dir)).toEqual(['empty/notes.txt', 'ops/nested/Bad.gql', 'ops/notes.txt', 'schema.graphql']);

    await writeFile(join(dir, 'ops', 'nested', 'Bad.gql'), 'query Hello($name: String!) { hello(name: $name) }');
    const ok = await generate('-w', 'ops', 'Greeter');
    expect(ok).toEqual({ code: 0, stdout: 'wrote out/service.proto, out/service.proto.lock.json (package service.v1, service Greeter, from 1 operation file)\n', stderr: '' });
    const unused = await generate('--max-depth', '3');
    expect(unused.stderr).toBe('warning: --max-depth applies to --with-operations only; ignored\n');
  });
});
