/**
 * The message-field check (src/grpc/message-fields.ts) as `switchyard
 * compose` runs it answers as the router does when it loads the subgraph
 * (the grpc plugin's compileServiceModel): compose accepts exactly the
 * protos the router loads and refuses the others with the router's words.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { compileServiceModel } from '../../plugins/grpc/service-model.js';
import { checkMessageFields, formatMissingMessageField, grpcSubgraphSchema, missingMessageFields, protoFieldNames, snakeCase } from '../../src/grpc/message-fields.js';
import { generateService } from '../../src/grpc/generate.js';
import { parseGrpcMapping } from '../../src/grpc/mapping.js';
import { loadProto } from '../../src/grpc/proto-root.js';
import { CATALOG_SDL } from '../plugins/grpc/catalog-fixture.js';

let proto: string;
let mapping: Record<string, unknown>;

beforeAll(async () => {
  const generated = await generateService({ sdl: CATALOG_SDL });
  proto = generated.proto;
  mapping = JSON.parse(generated.mappingText) as Record<string, unknown>;
});

/** What compose says of the catalog subgraph with `edit` applied to its proto: the message of the first missing field, or 'accepted'. */
async function composeAnswer(edited: string): Promise<string> {
  const loaded = await loadProto(edited, 'service.proto');
  const schema = grpcSubgraphSchema(CATALOG_SDL);
  if (!schema) throw new Error('schema not built');
  const context = { schema, root: loaded.root, packageName: loaded.packageName, protoField: protoFieldNames(parseGrpcMapping(mapping, 'mapping.json')) };
  const [first] = missingMessageFields(context);
  // checkMessageFields throws what missingMessageFields lists first.
  const thrown = (check: typeof checkMessageFields) => {
    try {
      check(context);
      return 'accepted';
    } catch (error) {
      return (error as Error).message;
    }
  };
  expect(thrown(checkMessageFields)).toBe(first ? formatMissingMessageField(first) : 'accepted');
  return thrown(checkMessageFields);
}

/** What the router says when it loads the subgraph (the grpc plugin), without the `subgraph "catalog": ` prefix, or 'accepted'. */
async function routerAnswer(edited: string): Promise<string> {
  return compileServiceModel({ kind: 'grpc', name: 'catalog', url: 'dns:///127.0.0.1:1', sdl: CATALOG_SDL, proto: edited, mapping }).then(
    () => 'accepted',
    (error: Error) => error.message.replace(/^subgraph "catalog": /, ''),
  );
}

const EDITS: Record<string, (proto: string) => string> = {
  'as generated': (text) => text,
  'Product without category': (text) => text.replace('  Category category = 12;\n', ''),
  'Product without created_at (createdAt)': (text) => text.replace('  string created_at = 9;\n', ''),
  'Category without parent': (text) => text.replace('  Category parent = 3;\n', ''),
  'Review without body, Author without name': (text) =>
    text.replace('  google.protobuf.StringValue body = 3;\n', '').replace(/(message Author \{\n {2}string id = 1;\n) {2}string name = 2;\n/, '$1'),
  'Product with a field the schema does not have': (text) => text.replace('  Category category = 12;\n', '  Category category = 12;\n  string extra = 13;\n'),
};

describe('the compose message-field check', () => {
  it.each(Object.keys(EDITS))('answers as the router does at load: %s', async (name) => {
    const edited = EDITS[name]!(proto);
    if (name !== 'as generated') expect(edited).not.toBe(proto);
    const answer = await composeAnswer(edited);
    expect(answer).toBe(await routerAnswer(edited));
    if (name === 'as generated' || name.includes('does not have')) expect(answer).toBe('accepted');
    else expect(answer).toMatch(/^message \w+ has no field \w+ for \w+\.\w+ \(regenerate service\.proto and mapping\.json from the schema, and recompose\)$/);
  });

  it('names type, field, message and proto field', async () => {
    expect(await composeAnswer(EDITS['Product without created_at (createdAt)']!(proto))).toBe(
      'message Product has no field created_at for Product.createdAt (regenerate service.proto and mapping.json from the schema, and recompose)',
    );
  });

  it('lists every missing field, in schema order', async () => {
    const loaded = await loadProto(EDITS['Review without body, Author without name']!(proto), 'service.proto');
    const schema = grpcSubgraphSchema(CATALOG_SDL)!;
    const missing = missingMessageFields({ schema, root: loaded.root, packageName: loaded.packageName, protoField: (_type, field) => snakeCase(field) });
    expect(missing.map(({ typeName, fieldName, message }) => `${message}: ${typeName}.${fieldName}`)).toEqual(['Review: Review.body', 'Author: Author.name']);
  });

  it('leaves a schema it cannot build to composition', () => {
    expect(grpcSubgraphSchema('type Query { a: Missing }')).toBeUndefined();
    expect(grpcSubgraphSchema('type Query {')).toBeUndefined();
  });

  it('names proto fields as the generator does', () => {
    expect(['createdAt', 'id', 'HTTPStatus', 'shippingEstimate'].map(snakeCase)).toEqual(['created_at', 'id', 'http_status', 'shipping_estimate']);
  });
});
