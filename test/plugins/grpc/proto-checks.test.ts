/**
 * What a gRPC subgraph's proto must be for the router to serve it, checked
 * when the subgraph loads (and by `switchyard compose`, which loads protos
 * the same way): proto3, the imports the generator uses, and a message field
 * for every GraphQL field the generator writes. Each refusal names the
 * subgraph and what is wrong, instead of answers read wrongly later.
 */
import protobuf from 'protobufjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileServiceModel } from '../../../plugins/grpc/service-model.js';
import { CATALOG_SDL } from './catalog-fixture.js';
import { generatedServiceOf } from './grpc-graph.js';

let proto: string;
let mapping: Record<string, unknown>;

beforeAll(async () => {
  const generated = await generatedServiceOf(CATALOG_SDL);
  proto = generated.proto;
  mapping = JSON.parse(generated.mappingText) as Record<string, unknown>;
});

/** Compiles the catalog subgraph with `edit` applied to its generated proto; resolves with the error message, or 'loaded'. */
async function load(edit: (proto: string) => string): Promise<string> {
  const edited = edit(proto);
  expect(edited).not.toBe(proto);
  return compileServiceModel({ kind: 'grpc', name: 'catalog', url: 'dns:///127.0.0.1:1', sdl: CATALOG_SDL, proto: edited, mapping }).then(
    () => 'loaded',
    (error: Error) => error.message,
  );
}

describe('a gRPC subgraph proto', () => {
  it('reads an enum number by the name the mapping uses when allow_alias gave the number an earlier name', async () => {
    const aliased = proto.replace(
      '  PRODUCT_KIND_UNSPECIFIED = 0;\n  PRODUCT_KIND_PHYSICAL = 1;',
      '  option allow_alias = true;\n  PRODUCT_KIND_UNSPECIFIED = 0;\n  PRODUCT_KIND_LEGACY = 1;\n  PRODUCT_KIND_PHYSICAL = 1;',
    );
    expect(aliased).not.toBe(proto);
    const model = await compileServiceModel({ kind: 'grpc', name: 'catalog', url: 'dns:///127.0.0.1:1', sdl: CATALOG_SDL, proto: aliased, mapping });
    const kinds = protobuf.parse(aliased).root.lookupEnum('ProductKind');
    // protobufjs names number 1 PRODUCT_KIND_LEGACY; the mapping knows it as PRODUCT_KIND_PHYSICAL.
    expect(kinds.valuesById[1]).toBe('PRODUCT_KIND_LEGACY');
    expect([1, 2].map((number) => model.graphqlEnumValue(kinds, 'ProductKind', number))).toEqual(['PHYSICAL', 'DIGITAL']);
  });

  it('loads as generated, also with comments before its syntax line', async () => {
    expect(await load((text) => `// service.proto\n/* generated */\n${text}`)).toBe('loaded');
  });

  it('is refused when it is proto2, whose defaults, required fields and groups the router would ignore or misread', async () => {
    const proto2 = (text: string) => text.replace('syntax = "proto3";', 'syntax = "proto2";').replace('  string name = 2;', '  required string name = 2;');
    expect(await load(proto2)).toBe(
      'subgraph "catalog" proto: declares syntax = "proto2"; the router reads proto3 only (it would ignore proto2\'s defaults and required fields, and misread its groups): write it as proto3, as switchyard grpc-service generate does',
    );
    expect(await load((text) => text.replace('syntax = "proto3";', ''))).toMatch(/^subgraph "catalog" proto: declares no syntax, which means proto2; the router reads proto3 only/);
    expect(await load((text) => text.replace('syntax = "proto3";', 'edition = "2023";'))).toMatch(
      /^subgraph "catalog" proto: declares edition = "2023"; the router reads proto3 only/,
    );
  });

  it('is refused when a proto3 field has a [default], which proto3 does not have', async () => {
    expect(await load((text) => text.replace('  string name = 2;', '  string name = 2 [default = "N/A"];'))).toBe(
      'subgraph "catalog" proto: field name of message Product has [default = ...], which proto3 does not allow',
    );
  });

  it('is refused when it imports a file other than the well-known types the generator uses, naming those', async () => {
    expect(await load((text) => text.replace('import "google/protobuf/wrappers.proto";', 'import "google/protobuf/wrappers.proto";\nimport "google/protobuf/struct.proto";'))).toBe(
      'subgraph "catalog" proto: imports "google/protobuf/struct.proto", which the router cannot load; it loads only google/protobuf/wrappers.proto, google/protobuf/empty.proto, google/protobuf/timestamp.proto',
    );
  });

  it('is refused when a message lacks the field of a GraphQL field, naming type, field and message', async () => {
    expect(await load((text) => text.replace('  Category category = 12;\n', ''))).toBe(
      'subgraph "catalog": message Product has no field category for Product.category (regenerate service.proto and mapping.json from the schema, and recompose)',
    );
    // Fields the generator leaves out of the message (@external, @requires, fields with arguments) are not asked for: the generated proto loads (above).
  });
});
