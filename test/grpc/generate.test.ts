import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generateService } from '../../src/grpc/generate.js';
import { packageNameProblem, protoPackageProblem, serviceNameFor } from '../../src/grpc/package-name.js';
import { serviceNameFromArgument } from '../../src/grpc/service-name.js';
import { findService, loadProto } from '../../src/grpc/proto-root.js';
import { RouterError } from '../../src/index.js';
import { CATALOG_SDL } from '../plugins/grpc/catalog-fixture.js';
import { tempDir } from './support.js';

const run = promisify(execFile);
const BUF = join(import.meta.dirname, '../../node_modules/.bin/buf');

async function failure(promise: Promise<unknown>): Promise<RouterError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RouterError) return error;
    throw error;
  }
  throw new Error('expected generation to fail');
}

describe('generating a gRPC service from a GraphQL schema', () => {
  it('writes the proto and mapping of a schema using every construct (snapshots)', async () => {
    const service = await generateService({ sdl: CATALOG_SDL });
    await expect(service.proto).toMatchFileSnapshot('./__snapshots__/catalog.service.proto');
    await expect(service.mappingText).toMatchFileSnapshot('./__snapshots__/catalog.mapping.json');
    await expect(service.lockText).toMatchFileSnapshot('./__snapshots__/catalog.service.proto.lock.json');
    expect(service.proto).toContain('package service.v1;');
    expect(service.proto).toMatch(/rpc QueryProduct\(QueryProductRequest\) returns \(QueryProductResponse\)/);
    expect(service.proto).toMatch(/rpc MutationSetPrice\(MutationSetPriceRequest\)/);
    expect(service.proto).toMatch(/rpc LookupProductById\(LookupProductByIdRequest\)/);
    expect(service.proto).toMatch(/enum ProductKind \{\s+PRODUCT_KIND_UNSPECIFIED = 0;\s+PRODUCT_KIND_PHYSICAL = 1;\s+PRODUCT_KIND_DIGITAL = 2;\s+\}/);
    expect(service.proto).toMatch(/message QueryProductResponse \{\s+Product product = 1;\s+\}/);
  });

  it('keeps field numbers across regenerations and reserves the numbers of removed fields for good', async () => {
    const v1 = /* GraphQL */ `
      type Query { user(id: ID!): User }
      type User { id: ID! name: String! email: String age: Int bio: String }
    `;
    const first = await generateService({ sdl: v1 });
    const v2 = v1.replace(' email: String age: Int', '').replace('bio: String', 'bio: String createdAt: String');
    const second = await generateService({ sdl: v2, lock: JSON.parse(first.lockText) });
    const user = /message User \{([^}]*)\}/.exec(second.proto)![1]!;
    expect(user.replace(/\s+/g, ' ').trim()).toBe(
      'reserved 3 to 4; string id = 1; string name = 2; google.protobuf.StringValue bio = 5; google.protobuf.StringValue created_at = 6;',
    );
    // Fields that come back get new numbers: a reserved number is never used again.
    const restored = await generateService({ sdl: v1, lock: JSON.parse(second.lockText) });
    const again = /message User \{([^}]*)\}/.exec(restored.proto)![1]!;
    expect(again.replace(/\s+/g, ' ').trim()).toBe(
      'reserved 3 to 4, 6; string id = 1; string name = 2; google.protobuf.StringValue bio = 5; google.protobuf.StringValue email = 7; google.protobuf.Int32Value age = 8;',
    );
  });

  it('passes buf lint (STANDARD rules) in its package folder', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    for (const [pkg, folder] of [
      ['service.v1', 'service/v1'],
      ['acme.catalog.v2beta1', 'acme/catalog/v2beta1'],
    ] as const) {
      const service = await generateService({ sdl: CATALOG_SDL, packageName: pkg });
      await mkdir(join(dir, folder), { recursive: true });
      await writeFile(join(dir, folder, 'service.proto'), service.proto);
    }
    await writeFile(join(dir, 'buf.yaml'), 'version: v2\nlint:\n  use:\n    - STANDARD\n');
    const result = await run(BUF, ['lint'], { cwd: dir }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    expect(result).toEqual({ code: 0, output: '' });
  });

  it('loads with protobufjs, with every RPC of the mapping in the service, and round-trips a message', async () => {
    const service = await generateService({ sdl: CATALOG_SDL });
    const proto = await loadProto(service.proto, 'service.proto');
    const found = findService(proto, service.mapping.service)!;
    expect(found.fullName).toBe('.service.v1.ServiceService');
    const rpcs = [
      ...service.mapping.operationMappings.map((m) => m.mapped),
      ...service.mapping.entityMappings.flatMap((m) => [m.rpc, ...m.requiredFieldMappings.map((r) => r.rpc)]),
      ...service.mapping.resolveMappings.map((m) => m.rpc),
    ];
    expect(rpcs.sort()).toEqual(Object.keys(found.methods).sort());
    const product = proto.root.lookupType('service.v1.Product');
    const decoded = product.decode(product.encode(product.fromObject({ id: 'p1', stock: { value: 0 }, aliases: { list: { items: ['a'] } }, kind: 2 })).finish());
    expect(product.toObject(decoded, { defaults: true })).toMatchObject({ id: 'p1', stock: { value: 0 }, aliases: { list: { items: ['a'] } }, kind: 2, metadata: null });
  });

  it('names the service after its argument as wgc does, or after the package without one', () => {
    // wgc's upperFirst(camelCase(name)); test/grpc/wgc-equivalence.test.ts runs wgc itself on some of these.
    expect(['Service', 'service.v1', 'projects-service', 'myAPIService', 'XMLHttpRequest', 'order_items2', 'get 1st item', 'ABC'].map(serviceNameFromArgument)).toEqual([
      'Service',
      'ServiceV1',
      'ProjectsService',
      'MyApiService',
      'XmlHttpRequest',
      'OrderItems2',
      'Get1stItem',
      'Abc',
    ]);
    expect(serviceNameFromArgument('1abc')).toBeUndefined();
    expect(serviceNameFromArgument('--')).toBeUndefined();
    expect(serviceNameFor('service.v1')).toBe('ServiceService');
    expect(serviceNameFor('acme.order_items.v2')).toBe('OrderItemsService');
    expect(serviceNameFor('shop.v2api.v1')).toBe('V2ApiService');
  });

  it('takes any proto package, with or without a version (as wgc), and refuses text that is not a package', async () => {
    for (const name of ['service.v1', 'service', 'Acme.Catalog', 'acme._internal.v2beta1']) expect(protoPackageProblem(name)).toBeUndefined();
    expect(protoPackageProblem('foo bar')).toBe('"foo bar" is not a proto package: segment "foo bar" must start with a letter or _ and use only letters, digits and _');
    expect(protoPackageProblem('acme..v1')).toBe('"acme..v1" is not a proto package: it has an empty segment');
    const service = await generateService({ sdl: 'type Query { a: String }', packageName: 'catalog' });
    expect(service.proto).toMatch(/^package catalog;$/m);
    // Connect contracts, named after their folder, keep the version segment buf lint asks for.
    expect(packageNameProblem('service.v1')).toBeUndefined();
    expect(packageNameProblem('acme.projects.v1beta1')).toBeUndefined();
    expect(packageNameProblem('service')).toBe('"service" has no version segment; use a name such as service.v1 or acme.projects.v1');
    expect(packageNameProblem('acme.projects')).toBe('"acme.projects" must end with a version segment such as v1 or v1beta1 (found "projects")');
    expect(packageNameProblem('Acme.v1')).toBe('"Acme.v1": segment "Acme" must start with a lower-case letter and use only a-z, 0-9 and _');
    const error = await failure(generateService({ sdl: 'type Query { a: String }', packageName: 'acme..v1' }));
    expect(error.code).toBe('GRPC_GENERATION_FAILED');
    const go = await failure(generateService({ sdl: 'type Query { a: String }', goPackage: 'example.com/"x"' }));
    expect(go.message).toBe('go package "example.com/"x"" must be a non-empty Go import path without quotes, backslashes or spaces');
  });

  it('refuses a schema the generator cannot read, and one that would give a service without RPCs', async () => {
    const syntax = await failure(generateService({ sdl: 'type Query { a: }', origin: 'schema.graphql' }));
    expect([syntax.code, syntax.message]).toEqual(['GRPC_GENERATION_FAILED', 'schema.graphql: cannot generate a gRPC service: Syntax Error: Expected Name, found "}".']);
    const unknown = await failure(generateService({ sdl: 'type Query { a: Missing }', origin: 'schema.graphql' }));
    expect(unknown.message).toBe('schema.graphql: cannot generate a gRPC service: Unknown type: "Missing".');
    const empty = await failure(generateService({ sdl: 'type Thing { a: String }', origin: 'schema.graphql' }));
    expect(empty.message).toBe('schema.graphql: the schema defines no Query or Mutation fields and no @key entities, so the service would have no RPCs');
  });

  it('refuses a field named like a property of every JavaScript object, which the generator would write as a proto that does not load', async () => {
    const fields = await failure(generateService({ sdl: 'type Query { item: Item } type Item { id: ID! toString: String }', origin: 'schema.graphql' }));
    expect([fields.code, fields.message]).toEqual([
      'GRPC_GENERATION_FAILED',
      'schema.graphql: cannot generate a gRPC service: field Item.toString: the generator (@wundergraph/protographic, which wgc uses too) cannot number a name every JavaScript object has, and would write a service.proto that does not load; rename it',
    ]);
    const argument = await failure(generateService({ sdl: 'type Query { item(constructor: ID): String }' }));
    expect(argument.message).toMatch(/^schema: cannot generate a gRPC service: argument Query\.item\(constructor\): /);
  });

  it('refuses a lock file that is not one', async () => {
    const error = await failure(generateService({ sdl: 'type Query { a: String }', lock: { version: '1.0.0', messages: { Query: { fields: { a: 'one' } } }, enums: {} } }));
    expect(error.message).toBe('service.proto.lock.json: not a proto lock file: messages.Query.fields.a: Invalid input: expected number, received string');
  });

  it('reports nullable list items as warnings, since protobuf lists cannot hold null', async () => {
    const service = await generateService({ sdl: 'type Query { names: [String]! }' });
    expect(service.warnings).toEqual(['Nullable items are not supported in list types: [String] at line 1, column 21']);
  });
});
