/**
 * Request messages encoded, and the parents of field resolvers decoded,
 * by protobufjs. protobufjs builds each message type's `fromObject`,
 * `encode` and `decode` as generated JavaScript on first use, which a
 * process started with `--disallow-code-generation-from-strings` cannot
 * compile; there (the SDK's `codeGenerationAllowed`, decided once per
 * process) these functions walk protobufjs' reflection instead and write
 * the same bytes, field by field, with protobufjs' own Writer and Reader.
 *
 * The interpreted path covers what the plugin sends and reads: scalars,
 * enums (by number or name), nested messages and repeated fields, packed
 * or not. Map and group fields, which the generator never emits, are
 * refused with an error naming the field.
 */
import { createRequire } from 'node:module';
import type { Field, Reader, Type, Writer } from 'protobufjs';
import { codeGenerationAllowed } from '../../src/index.js';

type Protobuf = typeof import('protobufjs');

/** protobufjs' wire types by scalar type name (`types.basic`, `types.packed`), looked up by a field's type. */
type WireTypes = Readonly<Record<string, number | undefined>>;

/** protobufjs as the plugin already loaded it (src/grpc/proto-root.ts): a CommonJS module, so the same instance. */
let protobufjs: Protobuf | undefined;
function protobuf(): Protobuf {
  return (protobufjs ??= createRequire(import.meta.url)('protobufjs') as Protobuf);
}

/** A decoded message: field values by proto field name, absent fields at their defaults (as protobufjs gives them). */
export type DecodedMessage = Readonly<Record<string, unknown>>;

/** `object` (in the shape `Type.fromObject` reads) as the bytes of a `type` message. */
export function encodeMessage(type: Type, object: Record<string, unknown>): Uint8Array {
  if (codeGenerationAllowed()) return type.encode(type.fromObject(object)).finish();
  return encodeInterpreted(type, object);
}

/** The `type` message in `bytes`. */
export function decodeMessage(type: Type, bytes: Uint8Array): DecodedMessage {
  if (codeGenerationAllowed()) return type.decode(bytes) as unknown as DecodedMessage;
  return decodeInterpreted(type, bytes);
}

/** `encodeMessage` without generated code (exported for the differential test against protobufjs). */
export function encodeInterpreted(type: Type, object: Record<string, unknown>): Uint8Array {
  const writer = protobuf().Writer.create();
  writeMessage(type, object, writer, 0);
  return writer.finish();
}

/** `decodeMessage` without generated code (exported for the differential test against protobufjs). */
export function decodeInterpreted(type: Type, bytes: Uint8Array): DecodedMessage {
  const reader = protobuf().Reader.create(bytes);
  return readMessage(type, reader, reader.len, 0);
}

/** protobufjs' nesting limit, with its message: a message nested deeper is refused, not a stack overflow. */
function checkDepth(depth: number): void {
  if (depth > protobuf().util.recursionLimit) throw new Error('max depth exceeded');
}

/** The fields of `type` in field-number order, as protobufjs' encoder writes them. */
function sortedFields(type: Type): Field[] {
  return type.fieldsArray.map((field) => field.resolve()).sort((a, b) => a.id - b.id);
}

/** The scalar type a field's values are written as (an enum's are int32). */
function scalarTypeOf(field: Field): string {
  const { Enum } = protobuf();
  if (field.map || field.delimited) throw new Error(`field ${field.fullName}: map and group fields are not supported without code generation`);
  return field.resolvedType instanceof Enum ? 'int32' : field.type;
}

function writeMessage(type: Type, object: Record<string, unknown>, writer: Writer, depth: number): void {
  checkDepth(depth);
  const { types } = protobuf();
  for (const field of sortedFields(type)) {
    const value = object[field.name];
    if (value === undefined || value === null) continue;
    const scalar = scalarTypeOf(field);
    if (!field.repeated) {
      writeOne(field, scalar, value, writer, depth);
      continue;
    }
    const items = Array.isArray(value) ? (value as unknown[]) : [value];
    if (field.packed && (types.packed as WireTypes)[scalar] !== undefined) {
      if (items.length === 0) continue;
      writer.uint32(((field.id << 3) | 2) >>> 0).fork();
      for (const item of items) write(writer, scalar, convert(field, scalar, item));
      writer.ldelim();
    } else {
      for (const item of items) if (item !== undefined && item !== null) writeOne(field, scalar, item, writer, depth);
    }
  }
}

/** One value of `field`, with its tag; a single field without presence (proto3's default) is left out at its default, as protobufjs does. */
function writeOne(field: Field, scalar: string, value: unknown, writer: Writer, depth: number): void {
  const { Type: MessageType, types } = protobuf();
  if (field.resolvedType instanceof MessageType) {
    writer.uint32(((field.id << 3) | 2) >>> 0).fork();
    writeMessage(field.resolvedType, value as Record<string, unknown>, writer, depth + 1);
    writer.ldelim();
    return;
  }
  const converted = convert(field, scalar, value);
  if (!field.repeated && !field.hasPresence && isDefault(field, scalar, converted)) return;
  writer.uint32(((field.id << 3) | (types.basic as WireTypes)[scalar]!) >>> 0);
  write(writer, scalar, converted);
}

/** Whether a converted scalar or enum value is its field's default (which proto3 does not send). */
function isDefault(field: Field, scalar: string, value: unknown): boolean {
  const { Enum, types } = protobuf();
  if (field.resolvedType instanceof Enum) return value === field.typeDefault;
  switch (scalar) {
    case 'bool':
      return value === false;
    case 'string':
      return value === '';
    case 'bytes':
      return (value as Uint8Array).length === 0;
    case 'double':
    case 'float':
      return Object.is(value, 0);
    default:
      if ((types.long as WireTypes)[scalar] !== undefined && typeof value === 'object' && value !== null) {
        const long = value as { low: number; high: number };
        return !long.low && !long.high;
      }
      return value === 0;
  }
}

/** A value as `fromObject` converts it for a scalar or enum field. */
function convert(field: Field, scalar: string, value: unknown): unknown {
  const { Enum, util } = protobuf();
  if (field.resolvedType instanceof Enum) {
    if (typeof value === 'number') return value;
    const number = field.resolvedType.values[String(value)];
    if (number === undefined) throw new Error(`field ${field.fullName}: enum ${field.resolvedType.name} has no value ${String(value)}`);
    return number;
  }
  switch (scalar) {
    case 'double':
    case 'float':
      return Number(value);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return Number(value) | 0;
    case 'uint32':
    case 'fixed32':
      return Number(value) >>> 0;
    case 'bool':
      return Boolean(value);
    case 'string':
      return String(value);
    case 'bytes': {
      if (typeof value !== 'string') return value;
      const bytes = util.newBuffer(util.base64.length(value));
      util.base64.decode(value, bytes, 0);
      return bytes;
    }
    default:
      return toLong(scalar, value);
  }
}

/** A 64-bit value as `fromObject` converts it: a Long where protobufjs has Long support, else a number. */
function toLong(scalar: string, value: unknown): unknown {
  const { util } = protobuf();
  const unsigned = scalar === 'uint64' || scalar === 'fixed64';
  // protobufjs types its Long support as a bare constructor; it is the `long` package's class.
  const Long = util.Long as unknown as { fromValue(value: unknown, unsigned: boolean): unknown } | undefined;
  if (Long) return Long.fromValue(value, unsigned);
  if (typeof value === 'string') return Number.parseInt(value, 10);
  if (typeof value === 'object' && value !== null) {
    const long = value as { low: number; high: number };
    return new util.LongBits(long.low >>> 0, long.high >>> 0).toNumber(unsigned);
  }
  return value;
}

/** Writes a converted scalar by its type's name (`writer.int64(value)`...). */
function write(writer: Writer, scalar: string, value: unknown): void {
  (writer as unknown as Record<string, (value: unknown) => Writer>)[scalar]!(value);
}

function readMessage(type: Type, reader: Reader, end: number, depth: number): DecodedMessage {
  checkDepth(depth);
  const { types } = protobuf();
  const message: Record<string, unknown> = {};
  for (const field of sortedFields(type)) message[field.name] = field.repeated ? [] : field.map ? {} : field.defaultValue;
  while (reader.pos < end) {
    const tag = reader.uint32();
    const field = type.fieldsById[tag >>> 3];
    if (!field) {
      reader.skipType(tag & 7);
      continue;
    }
    const scalar = scalarTypeOf(field);
    if (!field.repeated) {
      message[field.name] = readOne(field, scalar, reader, depth);
      continue;
    }
    const items = message[field.name] as unknown[];
    if ((tag & 7) === 2 && (types.packed as WireTypes)[scalar] !== undefined) {
      const runEnd = reader.uint32() + reader.pos;
      while (reader.pos < runEnd) items.push(read(reader, scalar));
    } else {
      items.push(readOne(field, scalar, reader, depth));
    }
  }
  return message;
}

/** One value of `field` at the reader's position (after its tag). */
function readOne(field: Field, scalar: string, reader: Reader, depth: number): unknown {
  const { Type: MessageType } = protobuf();
  if (field.resolvedType instanceof MessageType) return readMessage(field.resolvedType, reader, reader.uint32() + reader.pos, depth + 1);
  return read(reader, scalar);
}

/** Reads a scalar by its type's name (`reader.int64()`...). */
function read(reader: Reader, scalar: string): unknown {
  return (reader as unknown as Record<string, () => unknown>)[scalar]!();
}
