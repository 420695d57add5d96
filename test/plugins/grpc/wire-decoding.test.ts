/**
 * The response decoder reads RPC answers from the protobuf wire format
 * straight into GraphQL JSON. These tests feed it messages encoded by
 * protobufjs (as any gRPC service would send them) and by hand (packed and
 * unpacked lists, unknown fields, repeated fields, malformed bytes), for the
 * catalog service's generated proto, which uses every construct the
 * generator maps.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Kind, parse, type FieldNode, type GraphQLObjectType, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import protobuf, { type Type } from 'protobufjs';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compiledObject, decoderChecks } from '../../../plugins/grpc/compiled-object.js';
import { ResponseBuilder } from '../../../plugins/grpc/from-proto.js';
import { ObjectPlans, type ValueStep } from '../../../plugins/grpc/object-plans.js';
import { ProtoShapeError } from '../../../plugins/grpc/proto-slot.js';
import { compileServiceModel, type ServiceModel } from '../../../plugins/grpc/service-model.js';
import { WireFormatError, WireReader } from '../../../plugins/grpc/wire-reader.js';
import { CATALOG_SDL, catalogProducts } from './catalog-fixture.js';
import { P1_ANSWER, P1_SELECTION } from './catalog-p1.js';
import { generatedServiceOf } from './grpc-graph.js';

let model: ServiceModel;

beforeAll(async () => {
  const generated = await generatedServiceOf(CATALOG_SDL);
  model = await compileServiceModel({ kind: 'grpc', name: 'catalog', url: 'dns:///127.0.0.1:1', sdl: CATALOG_SDL, proto: generated.proto, mapping: generated.mapping });
});

/** The response message type of a root field's RPC. */
function responseOf(field: string): Type {
  return model.rootFields.get(`Query.${field}`)!.response;
}

/** Encodes a response of a root field's RPC from a proto-shaped object, as protobufjs does. */
function encode(field: string, object: Record<string, unknown>): Buffer {
  const type = responseOf(field);
  return Buffer.from(type.encode(type.fromObject(object)).finish());
}

/** Decodes `bytes`, the answer to the query's one root field, for the query's selection. */
function decode(query: string, bytes: Buffer): unknown {
  const document = parse(query, { noLocation: true });
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d]] : [])));
  const node = operation.selectionSet.selections[0] as FieldNode;
  const rpc = model.rootFields.get(`Query.${node.name.value}`)!;
  const field = model.schema.getQueryType()!.getFields()[node.name.value]!;
  const builder = new ResponseBuilder(model, { schema: model.schema, fragments, variables: {} });
  return builder.fieldValue(bytes, rpc.response, rpc.response.fields[rpc.resultField]!, field.type, [node], undefined);
}

/** A hand-made message: fields written in order, each `[number, wire type, write]`. */
function message(fields: Array<[number, number, (writer: protobuf.Writer) => void]>): Buffer {
  const writer = protobuf.Writer.create();
  for (const [number, wireType, write] of fields) {
    writer.uint32((number << 3) | wireType);
    write(writer);
  }
  return Buffer.from(writer.finish());
}

/** The field number of a `Product` message field. */
function productField(name: string): number {
  return (responseOf('product').fields.product!.resolvedType as Type).fields[name]!.id;
}

/** A length-delimited field holding `bytes`. */
function bytesField(bytes: Uint8Array): (writer: protobuf.Writer) => void {
  return (writer) => writer.bytes(bytes);
}

const p1 = catalogProducts().p1!;

describe('reading RPC answers from the wire format', () => {
  it('reads wrappers, lists, nested lists, enums, custom scalars and nested objects, with aliases and __typename', () => {
    const value = decode(`{ product(id: "p1") { __typename ${P1_SELECTION} label: name again: category { id } } }`, encode('product', { product: p1 }));
    expect(value).toEqual({ __typename: 'Product', ...P1_ANSWER, label: 'Table', again: { id: 'c2' } });
    // Keys come in the order the selection asks for them, whatever order the fields were sent in.
    expect(Object.keys(value as object)).toEqual([
      '__typename',
      'id',
      'name',
      'price',
      'stock',
      'discontinued',
      'tags',
      'aliases',
      'sizes',
      'createdAt',
      'metadata',
      'kind',
      'category',
      'label',
      'again',
    ]);
  });

  it('gives the proto3 zero value for absent non-null fields and null for absent wrappers, ListOf lists and messages', () => {
    const value = decode(`{ product(id: "p0") { id name price stock discontinued tags aliases sizes metadata kind category { name } } }`, encode('product', { product: {} }));
    expect(value).toEqual({ id: '', name: '', price: 0, stock: null, discontinued: null, tags: [], aliases: null, sizes: null, metadata: null, kind: null, category: null });
  });

  it('gives null for an absent root message and an empty list for an absent repeated root field', () => {
    expect(decode(`{ product(id: "nope") { id } }`, encode('product', {}))).toBeNull();
    expect(decode(`{ products { id } }`, encode('products', {}))).toEqual([]);
  });

  it('tells a ListOf wrapper without its list (null) from one with an empty list ([])', () => {
    const value = decode(`{ product(id: "p1") { aliases sizes } }`, encode('product', { product: { aliases: {}, sizes: { list: { items: [{}, { list: {} }] } } } }));
    expect(value).toEqual({ aliases: null, sizes: [null, []] });
  });

  it('reads a list of objects, each from its own message', () => {
    const products = Object.values(catalogProducts());
    expect(decode(`{ products { id kind tags } }`, encode('products', { products }))).toEqual([
      { id: 'p1', kind: 'PHYSICAL', tags: ['wood', 'dining'] },
      { id: 'p2', kind: 'DIGITAL', tags: [] },
      { id: 'p3', kind: 'PHYSICAL', tags: ['light'] },
    ]);
  });

  it('resolves interfaces and unions from the oneof member sent, with fragments and type conditions', () => {
    const article = { id: 'a1', title: 'Choosing a table', author: { id: 'u1', name: 'Ada' } };
    const query = `fragment Parts on Article { title author { name } } { search(term: "t") { __typename ... on Product { name kind } ...Parts } }`;
    expect(decode(query, encode('search', { search: [{ product: p1 }, { article }, {}] }))).toEqual([
      { __typename: 'Product', name: 'Table', kind: 'PHYSICAL' },
      { __typename: 'Article', title: 'Choosing a table', author: { name: 'Ada' } },
      null,
    ]);
    expect(decode(`{ node(id: "u1") { __typename id ... on Author { name } } }`, encode('node', { node: { author: { id: 'u1', name: 'Ada' } } }))).toEqual({
      __typename: 'Author',
      id: 'u1',
      name: 'Ada',
    });
    expect(decode(`{ node(id: "zz") { id } }`, encode('node', { node: {} }))).toBeNull();
  });

  it('reads each item of a list whose items alternate between object types with the fields of its own type', () => {
    const article = { id: 'a1', title: 'Choosing a table', author: { id: 'u1', name: 'Ada' } };
    const query = `{ search(term: "t") { __typename ... on Product { id name } ... on Article { id title author { name } } } }`;
    const product = { __typename: 'Product', id: 'p1', name: 'Table' };
    const read = { __typename: 'Article', id: 'a1', title: 'Choosing a table', author: { name: 'Ada' } };
    expect(decode(query, encode('search', { search: [{ product: p1 }, { article }, { product: p1 }, { product: p1 }, { article }, { article }, { product: p1 }] }))).toEqual([
      product,
      read,
      product,
      product,
      read,
      read,
      product,
    ]);
  });

  it('maps enum numbers to GraphQL values and _UNSPECIFIED to null, and refuses a number the enum does not have', () => {
    const kind = (number: number) => decode(`{ product(id: "p1") { kind } }`, message([[1, 2, bytesField(message([[productField('kind'), 0, (w) => w.int32(number)]]))]]));
    expect([1, 2, 0].map(kind)).toEqual([{ kind: 'PHYSICAL' }, { kind: 'DIGITAL' }, { kind: null }]);
    expect(() => kind(99)).toThrow(new ProtoShapeError('enum ProductKind has no value numbered 99'));
  });

  it('reads packed and unpacked repeated numbers alike, and a repeated field sent in several runs', () => {
    const items = (numbers: number[], packed: boolean) =>
      packed
        ? message([[1, 2, bytesField(message([[1, 2, (w) => w.fork().int32(numbers[0]!).int32(numbers[1]!).ldelim()]]))]])
        : message([[1, 2, bytesField(message(numbers.map((n) => [1, 0, (w: protobuf.Writer) => w.int32(n)] as [number, number, (w: protobuf.Writer) => void])))]]);
    const sizes = message([
      [
        1,
        2,
        bytesField(
          message([
            [1, 2, bytesField(items([120, 80], true))],
            [1, 2, bytesField(items([3, -4], false))],
          ]),
        ),
      ],
    ]);
    const product = message([
      [productField('name'), 2, (w) => w.string('Table')],
      [productField('sizes'), 2, bytesField(sizes)],
      [productField('tags'), 2, (w) => w.string('wood')],
      [productField('name'), 2, (w) => w.string('Desk')],
      [productField('tags'), 2, (w) => w.string('dining')],
    ]);
    // The last value of a non-repeated field wins; repeated fields collect every occurrence.
    expect(decode(`{ product(id: "p1") { name tags sizes } }`, message([[1, 2, bytesField(product)]]))).toEqual({
      name: 'Desk',
      tags: ['wood', 'dining'],
      sizes: [
        [120, 80],
        [3, -4],
      ],
    });
  });

  it('skips fields the selection or the proto does not know, of every wire type', () => {
    const unknown: Array<[number, number, (writer: protobuf.Writer) => void]> = [
      [90, 0, (w) => w.int64(-5)],
      [91, 1, (w) => w.fixed64(7)],
      [92, 2, (w) => w.string('ignored')],
      [
        93,
        3,
        (w) =>
          w
            .uint32((1 << 3) | 0)
            .uint32(1)
            .uint32((93 << 3) | 4),
      ],
      [94, 5, (w) => w.fixed32(9)],
    ];
    const product = Buffer.concat([message(unknown), encode('product', { product: p1 }).subarray(3), message(unknown)]);
    const withUnknown = Buffer.concat([message([[1, 2, bytesField(product)]]), message(unknown)]);
    expect(decode(`{ product(id: "p1") { id tags } }`, withUnknown)).toEqual({ id: 'p1', tags: ['wood', 'dining'] });
  });

  it('skips unknown groups nested up to 100 levels and refuses deeper ones without recursing', () => {
    const nested = (levels: number): Buffer => Buffer.concat([Buffer.alloc(levels, (15 << 3) | 3), Buffer.alloc(levels, (15 << 3) | 4)]);
    const product = encode('product', { product: p1 });
    expect(decode(`{ product(id: "p1") { id } }`, Buffer.concat([nested(100), product]))).toEqual({ id: 'p1' });
    // 100,000 start-group tags: one frame per level would overflow the stack (a RangeError, not a wire error).
    expect(() => new WireReader(Buffer.alloc(100_000, (15 << 3) | 3)).skip(3)).toThrow(WireFormatError);
    expect(() => decode(`{ product(id: "p1") { id } }`, Buffer.concat([nested(101), product]))).toThrow(
      /^cannot decode QueryProductResponse: groups nested more than 100 levels deep at offset \d+$/,
    );
  });

  it('keeps a double that is not finite as it is, for the response shaper to refuse', () => {
    expect(decode(`{ product(id: "p1") { price } }`, encode('product', { product: { price: Number.NaN } }))).toEqual({ price: Number.NaN });
    expect(decode(`{ product(id: "p1") { price } }`, encode('product', { product: { price: Number.POSITIVE_INFINITY } }))).toEqual({ price: Number.POSITIVE_INFINITY });
  });

  it('refuses bytes that are not a message of the proto as a response that does not fit the schema', () => {
    const good = encode('product', { product: p1 });
    const cases: Array<[string, Buffer]> = [
      ['truncated', good.subarray(0, good.length - 3)],
      ['a length past the end', Buffer.from([0x0a, 0x7f, 0x0a])],
      ['a varint of 11 bytes', Buffer.from([0x08, ...Array(10).fill(0xff), 0x01])],
      ['wire type 7', Buffer.from([0x0f])],
      ['a string field sent as a number', message([[1, 2, bytesField(message([[productField('name'), 0, (w) => w.uint32(3)]]))]])],
      ['malformed UTF-8', message([[1, 2, bytesField(message([[productField('name'), 2, bytesField(Buffer.from([0x61, 0xff, 0x62]))]]))]])],
      ['a UTF-16 surrogate in UTF-8', message([[1, 2, bytesField(message([[productField('name'), 2, bytesField(Buffer.from([0xed, 0xa0, 0x80]))]]))]])],
    ];
    for (const [what, bytes] of cases) {
      let error: unknown;
      try {
        decode(`{ product(id: "p1") { id name tags } }`, bytes);
      } catch (caught) {
        error = caught;
      }
      expect(error, what).toBeInstanceOf(ProtoShapeError);
      expect((error as Error).message, what).toMatch(/^cannot decode QueryProductResponse: /);
    }
  });

  it('refuses a field sent with a wire type its proto type does not use, even where the bytes would read as a value', () => {
    // Each payload, read as the field's own type, is a well-formed value followed by zero bytes (field 0, skipped).
    const asFixed32 = (name: string): Buffer => message([[1, 2, bytesField(message([[productField(name), 5, (w) => w.fixed32(0x4101)]]))]]);
    const cases: Array<[string, Buffer]> = [
      ['a string sent as fixed32', asFixed32('name')],
      ['an enum sent as fixed32', asFixed32('kind')],
      ['a repeated string sent as fixed32', asFixed32('tags')],
      ['a double sent as a string', message([[1, 2, bytesField(message([[productField('price'), 2, bytesField(Buffer.alloc(7))]]))]])],
    ];
    for (const [what, bytes] of cases) {
      expect(() => decode(`{ product(id: "p1") { name kind tags price } }`, bytes), what).toThrow(/^cannot decode QueryProductResponse: wire type \d where \d was expected$/);
    }
  });

  it('keeps a replacement character the service really sent', () => {
    const bytes = message([[1, 2, bytesField(message([[productField('name'), 2, (w) => w.string('a\uFFFDb')]]))]]);
    expect(decode(`{ product(id: "p1") { name } }`, bytes)).toEqual({ name: 'a\uFFFDb' });
  });
});

describe('the wire reader', () => {
  it('reads every scalar encoding as protobufjs does', () => {
    const cases: Array<[string, (w: protobuf.Writer) => void, (r: WireReader) => unknown, unknown]> = [
      ['int32 negative', (w) => w.int32(-7), (r) => r.int32(), -7],
      ['int32 max', (w) => w.int32(2147483647), (r) => r.int32(), 2147483647],
      ['uint32 max', (w) => w.uint32(4294967295), (r) => r.uint32(), 4294967295],
      ['sint32', (w) => w.sint32(-123456), (r) => r.sint32(), -123456],
      ['int64 negative', (w) => w.int64(-9007199254740991), (r) => r.varint64(true), -9007199254740991],
      ['int64 large', (w) => w.int64(9007199254740991), (r) => r.varint64(true), 9007199254740991],
      ['int64 -1', (w) => w.int64(-1), (r) => r.varint64(true), -1],
      ['uint64 above 2^32', (w) => w.uint64(2 ** 40 + 3), (r) => r.varint64(false), 2 ** 40 + 3],
      ['sint64', (w) => w.sint64(-(2 ** 40) - 5), (r) => r.sint64(), -(2 ** 40) - 5],
      ['fixed32', (w) => w.fixed32(4000000000), (r) => r.fixed32(), 4000000000],
      ['sfixed32', (w) => w.sfixed32(-5), (r) => r.sfixed32(), -5],
      ['fixed64', (w) => w.fixed64(2 ** 50 + 1), (r) => r.fixed64(false), 2 ** 50 + 1],
      ['sfixed64', (w) => w.sfixed64(-(2 ** 50) - 1), (r) => r.fixed64(true), -(2 ** 50) - 1],
      ['float', (w) => w.float(1.1), (r) => r.float(), Math.fround(1.1)],
      ['double', (w) => w.double(-2.5e-300), (r) => r.double(), -2.5e-300],
      ['bool true', (w) => w.bool(true), (r) => r.bool(), true],
      ['bool false', (w) => w.bool(false), (r) => r.bool(), false],
      ['string', (w) => w.string('Zoë 🚂'), (r) => r.string(), 'Zoë 🚂'],
      ['bytes', (w) => w.bytes(Buffer.from([0, 255, 7])), (r) => r.base64(), Buffer.from([0, 255, 7]).toString('base64')],
    ];
    for (const [what, write, read, expected] of cases) {
      const writer = protobuf.Writer.create();
      write(writer);
      const encoded = Buffer.from(writer.finish());
      const reader = new WireReader(encoded);
      expect(read(reader), what).toEqual(expected);
      expect(reader.pos, what).toBe(encoded.length);
    }
  });

  it('reads strings of any length and script, after binary fields, from messages read in turn', () => {
    const texts = ['', 'project-12', 'Zoë', 'x'.repeat(64), 'y'.repeat(65), `${'z'.repeat(63)}é`, 'long text '.repeat(40), '2025-01-13T00:00:00.000Z'];
    // Each string follows a double whose bytes are not ASCII, so offsets into the message matter.
    const encodeAll = (suffix: string) => {
      const writer = protobuf.Writer.create();
      for (const text of texts) writer.double(-1234.567).string(text + suffix);
      return Buffer.from(writer.finish());
    };
    const readAll = (bytes: Buffer) => {
      const reader = new WireReader(bytes);
      const read: string[] = [];
      while (reader.pos < bytes.length) {
        reader.double();
        read.push(reader.string());
      }
      return read;
    };
    const first = encodeAll('a');
    const second = encodeAll('b');
    expect(readAll(first)).toEqual(texts.map((text) => `${text}a`));
    expect(readAll(second)).toEqual(texts.map((text) => `${text}b`));
    expect(readAll(first)).toEqual(texts.map((text) => `${text}a`));
    // A short string with a byte that is not UTF-8 is still refused.
    expect(() => new WireReader(Buffer.from([0x03, 0x61, 0xff, 0x62])).string()).toThrow(WireFormatError);
  });

  it('stops at the end of its bytes with a WireFormatError', () => {
    const reader = new WireReader(Buffer.from([0x80, 0x80]));
    expect(() => reader.uint32()).toThrow(WireFormatError);
    expect(() => new WireReader(Buffer.from([1, 2, 3])).double()).toThrow(WireFormatError);
    expect(() => new WireReader(Buffer.from([0x05, 0x61])).string()).toThrow(WireFormatError);
  });
});

describe('compiled object readers', () => {
  let checks = decoderChecks.enabled;
  beforeEach(() => {
    checks = decoderChecks.enabled;
  });
  afterEach(() => {
    decoderChecks.enabled = checks;
  });

  /** The plan of a Product read for the selection under `product` in `query`, with `variables`. */
  function productPlan(query: string, variables: Record<string, unknown> = {}) {
    const operation = parse(query, { noLocation: true }).definitions[0] as OperationDefinitionNode;
    const selection = (operation.selectionSet.selections[0] as FieldNode).selectionSet as SelectionSetNode;
    const plans = new ObjectPlans(model, { schema: model.schema, fragments: {}, variables });
    const product = model.schema.getType('Product') as GraphQLObjectType;
    const messageType = responseOf('product').fields.product!.resolvedType as Type;
    return plans.planFor(product, messageType, [selection]);
  }

  it('compiles a plan once a second fetch uses it, and only plans kept across fetches with no field resolver of their own', () => {
    // As in production: the suite otherwise compiles every plan at once.
    decoderChecks.enabled = false;
    const plan = productPlan('{ product(id: "p1") { id name kind tags } }');
    expect(plan.shared).toBe(true);
    // The items of a list in one fetch share the plan: that is one use.
    expect(compiledObject(plan, 1)).toBeUndefined();
    expect(compiledObject(plan, 1)).toBeUndefined();
    const compiled = compiledObject(plan, 2);
    expect(compiled).toBeTypeOf('function');
    expect(compiledObject(plan, 3)).toBe(compiled);

    const messageType = responseOf('product').fields.product!.resolvedType as Type;
    const product = Buffer.from(messageType.encode(messageType.fromObject(p1)).finish());
    const reader = new WireReader(product);
    expect(compiled!(reader, product.length, new ResponseBuilder(model, { schema: model.schema, fragments: {}, variables: {} }), undefined)).toEqual({
      id: 'p1',
      name: 'Table',
      kind: 'PHYSICAL',
      tags: ['wood', 'dining'],
    });

    const withVariable = productPlan('query ($more: Boolean!) { product(id: "p1") { id name @include(if: $more) } }', { more: true });
    expect(withVariable.shared).toBe(false);
    const withResolver = productPlan('{ product(id: "p1") { id reviews(limit: 2) { body } } }');
    expect(withResolver.hasResolvers).toBe(true);
    for (const plan of [withVariable, withResolver]) {
      compiledObject(plan, 1);
      expect(compiledObject(plan, 2)).toBeUndefined();
    }
  });

  it('keeps a field aliased __proto__ as an own key, in its place, without touching the prototype', () => {
    const value = decode(`{ product(id: "p1") { id __proto__: name tags } }`, encode('product', { product: p1 })) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['id', '__proto__', 'tags']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toBe('Table');
    expect(JSON.stringify(value)).toBe('{"id":"p1","__proto__":"Table","tags":["wood","dining"]}');
  });

  it('leaves every plan to the general reader when Node may not compile code', () => {
    const module = fileURLToPath(new URL('../../../plugins/grpc/compiled-object.ts', import.meta.url));
    const script = `
      const { compiledObject } = await import(${JSON.stringify(module)});
      const step = { kind: 'value', key: 'a', number: 1, codec: { kind: 'scalar', type: 'string', wireType: 2, absent: '' }, selections: [] };
      const plan = { steps: [step], byNumber: [undefined, [step]], hasResolvers: false, shared: true };
      console.log(JSON.stringify([1, 2, 3].map((fetch) => typeof compiledObject(plan, fetch))));`;
    const run = (flags: string[]) => execFileSync(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }).trim();
    expect(run([])).toBe('["undefined","function","function"]');
    expect(run(['--disallow-code-generation-from-strings'])).toBe('["undefined","undefined","undefined"]');
  });

  it('compiles a plan reading the largest field number at once', { timeout: 5000 }, () => {
    const step: ValueStep = { kind: 'value', key: 'big', number: 536_870_911, codec: { kind: 'scalar', type: 'string', wireType: 2, absent: '' }, selections: [] };
    const byNumber: Array<readonly ValueStep[] | undefined> = [];
    byNumber[step.number] = [step];
    // Compiling by walking every field number up to 2^29 took 16 s.
    const compiled = compiledObject({ steps: [step], byNumber, hasResolvers: false, shared: true }, 1);
    const bytes = message([[step.number, 2, (w) => w.string('far')]]);
    expect(compiled!(new WireReader(bytes), bytes.length, new ResponseBuilder(model, { schema: model.schema, fragments: {}, variables: {} }), undefined)).toEqual({ big: 'far' });
  });
});
