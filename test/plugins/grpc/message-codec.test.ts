/**
 * The grpc plugin's messages without generated code (plugins/grpc/message-codec.ts),
 * used where the process forbids code generation: the interpreted encoder
 * writes the bytes protobufjs' generated `fromObject` + `encode` write, and
 * the interpreted decoder reads what protobufjs' `decode` reads.
 */
import { describe, expect, it } from 'vitest';
import type { Type } from 'protobufjs';
import { decodeInterpreted, encodeInterpreted } from '../../../plugins/grpc/message-codec.js';
import { loadProto } from '../../../src/grpc/proto-root.js';

const PROTO = /* proto */ `
  syntax = "proto3";
  package codec.v1;
  import "google/protobuf/wrappers.proto";

  enum Kind {
    KIND_UNSPECIFIED = 0;
    KIND_PHYSICAL = 1;
    KIND_DIGITAL = 2;
  }

  message Inner {
    string name = 1;
    Inner child = 2;
    repeated int32 sizes = 3;
  }

  message Everything {
    double a_double = 1;
    float a_float = 2;
    int32 an_int32 = 3;
    uint32 a_uint32 = 4;
    sint32 a_sint32 = 5;
    fixed32 a_fixed32 = 6;
    sfixed32 an_sfixed32 = 7;
    int64 an_int64 = 8;
    uint64 a_uint64 = 9;
    sint64 a_sint64 = 10;
    fixed64 a_fixed64 = 11;
    sfixed64 an_sfixed64 = 12;
    bool a_bool = 13;
    string a_string = 14;
    bytes some_bytes = 15;
    Kind kind = 16;
    Inner inner = 17;
    repeated Inner inners = 18;
    repeated string names = 19;
    repeated double doubles = 20;
    repeated Kind kinds = 21;
    repeated int64 longs = 22;
    google.protobuf.StringValue wrapped = 23;
    optional int32 maybe = 24;
    oneof choice {
      string text = 30;
      Inner nested = 31;
    }
    map<string, int32> counts = 40;
  }
`;

async function everything(): Promise<Type> {
  const { root } = await loadProto(PROTO, 'codec test');
  return root.lookupType('codec.v1.Everything');
}

/** Objects as the plugin builds them (to-proto.ts: numbers, enum numbers, Buffers) and as fromObject also takes them. */
const CASES: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['an empty message', {}],
  [
    'every scalar type, at ordinary values',
    {
      a_double: 1.5,
      a_float: 0.25,
      an_int32: -7,
      a_uint32: 4_000_000_000,
      a_sint32: -300,
      a_fixed32: 123_456,
      an_sfixed32: -5,
      an_int64: 9_007_199_254_740_991,
      a_uint64: 42,
      a_sint64: -42,
      a_fixed64: 77,
      an_sfixed64: -77,
      a_bool: true,
      a_string: 'héllo, wörld',
      some_bytes: Buffer.from([0, 1, 2, 255]),
    },
  ],
  ['scalars at their defaults, written because they are set', { a_double: 0, an_int32: 0, a_bool: false, a_string: '', an_int64: 0 }],
  ['64-bit numbers as decimal strings, bytes as base64', { an_int64: '-9223372036854775808', a_uint64: '18446744073709551615', a_fixed64: '5', some_bytes: 'AAEC/w==' }],
  ['enums by number and by name', { kind: 2, kinds: ['KIND_PHYSICAL', 2, 0] }],
  ['nested and repeated messages', { inner: { name: 'a', child: { name: 'b', sizes: [1, -2, 3] } }, inners: [{ name: 'x' }, {}, { sizes: [] }] }],
  ['packed and unpacked repeated fields, empty ones left out', { names: ['p', '', 'q'], doubles: [1.25, -0, Number.MAX_VALUE], longs: [1, '-2', 3], kinds: [] }],
  ['a wrapper, a proto3 optional field and a oneof member', { wrapped: { value: 'w' }, maybe: 0, nested: { name: 'n' } }],
  ['numbers converted as fromObject converts them', { an_int32: 3.9, a_uint32: -1, a_float: '2.5', a_string: 12, a_bool: 1 }],
  ['null and undefined fields left out', { a_string: null, inner: undefined, names: [] }],
];

describe('messages without generated code', () => {
  it.each(CASES)('encodes %s to the bytes protobufjs writes', async (_, object) => {
    const type = await everything();
    const expected = Buffer.from(type.encode(type.fromObject(object)).finish()).toString('hex');
    expect(Buffer.from(encodeInterpreted(type, object)).toString('hex')).toBe(expected);
  });

  it.each(CASES)('decodes %s to the fields protobufjs reads, with the same defaults', async (_, object) => {
    const type = await everything();
    const bytes = type.encode(type.fromObject(object)).finish();
    const decoded = decodeInterpreted(type, bytes);
    const general = type.decode(bytes) as unknown as Record<string, unknown>;
    for (const field of type.fieldsArray) {
      if (field.map) continue;
      expect({ field: field.name, value: normalize(decoded[field.name]) }).toEqual({ field: field.name, value: normalize(general[field.name]) });
    }
    // What a field resolver's request is built from: the decoded parent re-encoded gives the same bytes.
    const { counts: _counts, ...withoutMap } = decoded;
    expect(Buffer.from(encodeInterpreted(type, withoutMap)).toString('hex')).toBe(Buffer.from(type.encode(type.fromObject(withoutMap)).finish()).toString('hex'));
  });

  it('reads fields it does not know past, and repeated numbers both packed and not', async () => {
    const type = await everything();
    // Field 99 (unknown varint), then sizes of Inner... as a top-level `doubles` sent unpacked (wire type 1, twice).
    const unpacked = Buffer.concat([Buffer.from([0xf8, 0x06, 0x05]), Buffer.from([0xa1, 0x01]), doubleBytes(1.5), Buffer.from([0xa1, 0x01]), doubleBytes(-2)]);
    expect(decodeInterpreted(type, unpacked).doubles).toEqual([1.5, -2]);
    expect((type.decode(unpacked) as unknown as { doubles: number[] }).doubles).toEqual([1.5, -2]);
  });

  it('refuses what it does not cover, and bad input, with an error naming the problem', async () => {
    const type = await everything();
    expect(() => encodeInterpreted(type, { counts: { a: 1 } })).toThrow('field .codec.v1.Everything.counts: map and group fields are not supported without code generation');
    expect(() => encodeInterpreted(type, { kind: 'KIND_UNKNOWN' })).toThrow('enum Kind has no value KIND_UNKNOWN');
    // A message field whose length runs past the end of the bytes.
    expect(() => decodeInterpreted(type, Buffer.from([0x8a, 0x01, 0x10, 0x0a]))).toThrow(RangeError);
    // Nesting deeper than protobufjs allows (101 levels of Inner.child).
    let deep: Record<string, unknown> = { name: 'leaf' };
    for (let i = 0; i < 101; i++) deep = { child: deep };
    expect(() => encodeInterpreted(type, { inner: deep })).toThrow('max depth exceeded');
  });
});

/** Values compared across the two decoders: Longs as decimal text, Buffers as hex, messages as plain objects. */
function normalize(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `bytes:${Buffer.from(value).toString('hex')}`;
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value === 'object') {
    if ('low' in value && 'high' in value && 'unsigned' in value) return `long:${String(value)}`;
    const plain: Record<string, unknown> = {};
    for (const key of Object.keys(value)) plain[key] = normalize((value as Record<string, unknown>)[key]);
    // protobufjs keeps defaults on the prototype; the interpreted decoder as own fields.
    const type = (value as { $type?: Type }).$type;
    if (type) for (const field of type.fieldsArray) plain[field.name] ??= normalize((value as Record<string, unknown>)[field.name]);
    return plain;
  }
  return value;
}

function doubleBytes(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleLE(value);
  return bytes;
}
