/**
 * How to read one proto field as a GraphQL value, worked out once per proto
 * field and GraphQL type: the scalar's wire encoding, a wrapper's inner
 * field, an enum's GraphQL values, a message's object type, a oneof's
 * members, a repeated field or a `ListOf...` wrapper and its items. The
 * value of an absent field is worked out here too, as proto3 defines it
 * (zero values, null messages) and as the generator's wrappers mean it
 * (null); an enum's zero value is `_UNSPECIFIED`, which reads as null. A
 * proto that does not fit the GraphQL type (a stale generation) becomes an
 * `invalid` codec, which fails when the field is read; so does an enum
 * number the GraphQL enum has no value for (a service built from a newer
 * proto), rather than reading as null.
 */
import { isObjectType, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import type { Enum, Type } from 'protobufjs';
import type { TypeKind } from './object-plans.js';
import { ProtoShapeError, isEnumType, isMessageType, itemSlot, listItemsField, slotOf, type Slot } from './proto-slot.js';
import type { ServiceModel } from './service-model.js';
import { FIXED32, FIXED64, LENGTH_DELIMITED, VARINT } from './wire-reader.js';

/** Proto scalar types. */
export type ScalarType =
  | 'string'
  | 'bytes'
  | 'bool'
  | 'int32'
  | 'uint32'
  | 'sint32'
  | 'int64'
  | 'uint64'
  | 'sint64'
  | 'fixed32'
  | 'sfixed32'
  | 'fixed64'
  | 'sfixed64'
  | 'float'
  | 'double';

/** An oneof member of an interface or union message: its object type, or why it has none. */
export interface OneofMember {
  readonly messageType: Type;
  readonly objectType: GraphQLObjectType | undefined;
  readonly error: ProtoShapeError | undefined;
}

/** How a field's value is read. */
export type Codec =
  | {
      readonly kind: 'scalar';
      readonly type: ScalarType;
      /** The wire type this scalar is sent with (packed lists: length-delimited). */
      readonly wireType: number;
      /** GraphQL value of the zero value. */
      readonly absent: unknown;
    }
  /** A `google.protobuf.*Value` wrapper: null when absent. */
  | { readonly kind: 'wrapped'; readonly valueNumber: number; readonly value: Codec & { kind: 'scalar' } }
  /**
   * GraphQL values by proto number; 0 (`_UNSPECIFIED`) is null unless the
   * schema maps it. Any other number without a GraphQL value (one the proto
   * does not define, or a proto value the schema lacks) fails the read.
   */
  | { readonly kind: 'enum'; readonly values: ReadonlyMap<number, string | null>; readonly absent: unknown; readonly enumType: Enum; readonly graphqlName: string }
  | { readonly kind: 'object'; readonly messageType: Type; readonly objectType: GraphQLObjectType }
  | { readonly kind: 'abstract'; readonly members: ReadonlyMap<number, OneofMember> }
  /** A repeated field: each occurrence (or packed run) adds items. */
  | { readonly kind: 'repeated'; readonly item: Codec }
  /** A `ListOf...` wrapper: `{ list: { items: [...] } }`; null when absent. */
  | { readonly kind: 'listOf'; readonly listNumber: number; readonly itemsNumber: number; readonly item: Codec }
  | {
      readonly kind: 'invalid';
      readonly error: ProtoShapeError;
      /** Whether an absent field is null (as a message field is) rather than the error. */
      readonly absentIsNull: boolean;
    };

const WIRE_TYPES: Readonly<Record<ScalarType, number>> = {
  string: LENGTH_DELIMITED,
  bytes: LENGTH_DELIMITED,
  bool: VARINT,
  int32: VARINT,
  uint32: VARINT,
  sint32: VARINT,
  int64: VARINT,
  uint64: VARINT,
  sint64: VARINT,
  fixed32: FIXED32,
  sfixed32: FIXED32,
  fixed64: FIXED64,
  sfixed64: FIXED64,
  float: FIXED32,
  double: FIXED64,
};

function isScalarType(name: string): name is ScalarType {
  return Object.hasOwn(WIRE_TYPES, name);
}

function scalarCodec(type: ScalarType): Codec & { kind: 'scalar' } {
  const absent = type === 'string' || type === 'bytes' ? '' : type === 'bool' ? false : 0;
  return { kind: 'scalar', type, wireType: WIRE_TYPES[type], absent };
}

/** A proto field that cannot carry the GraphQL type. Absent, it is null only where protobufjs left a message field null before. */
function invalid(message: string, slot: Slot, absentMayBeNull = true): Codec {
  return { kind: 'invalid', error: new ProtoShapeError(message), absentIsNull: absentMayBeNull && !slot.repeated && isMessageType(slot.type) };
}

/** The GraphQL value of enum number `number`; throws a `ProtoShapeError` for a number with none. */
export function enumValue(codec: Codec & { kind: 'enum' }, number: number): string | null {
  const value = codec.values.get(number);
  if (value !== undefined) return value;
  const name = codec.enumType.valuesById[number];
  throw new ProtoShapeError(
    name === undefined
      ? `enum ${codec.enumType.name} has no value numbered ${number}`
      : `enum value ${name} (${number}) of ${codec.enumType.name} has no value in GraphQL enum ${codec.graphqlName}`,
  );
}

/** The value of a field absent from its message (a fresh array for repeated fields); throws for an `invalid` codec that has none. */
export function absentValue(codec: Codec): unknown {
  switch (codec.kind) {
    case 'scalar':
    case 'enum':
      return codec.absent;
    case 'repeated':
      return [];
    case 'invalid':
      if (codec.absentIsNull) return null;
      throw codec.error;
    default:
      return null;
  }
}

/** Codecs of one compiled service, by slot and GraphQL type kind. */
export class Codecs {
  private readonly codecs = new WeakMap<Slot, Map<TypeKind, Codec>>();

  constructor(
    private readonly model: ServiceModel,
    private readonly schema: GraphQLSchema,
  ) {}

  /** How to read a field of shape `slot` as a value of kind `kind`. */
  codecFor(slot: Slot, kind: TypeKind): Codec {
    let byKind = this.codecs.get(slot);
    if (!byKind) this.codecs.set(slot, (byKind = new Map()));
    let codec = byKind.get(kind);
    if (!codec) byKind.set(kind, (codec = this.compile(slot, kind)));
    return codec;
  }

  private compile(slot: Slot, kind: TypeKind): Codec {
    if (kind.kind === 'list') {
      if (slot.repeated) return { kind: 'repeated', item: this.codecFor(itemSlot(slot), kind.item) };
      const items = listItemsField(slot.type);
      const listField = isMessageType(slot.type) ? slot.type.fields.list : undefined;
      if (!items || !listField) return invalid(`expected a repeated field or a ListOf wrapper, found ${slot.scalar}`, slot, false);
      return { kind: 'listOf', listNumber: listField.id, itemsNumber: items.id, item: this.codecFor(itemSlot(slotOf(items)), kind.item) };
    }
    if (slot.repeated) return invalid(`expected a single value for ${kind.name}, found a repeated ${slot.scalar}`, slot);
    switch (kind.kind) {
      case 'enum': {
        if (!isEnumType(slot.type)) return invalid(`expected a proto enum for ${kind.name}, found ${slot.scalar}`, slot);
        const enumType = slot.type;
        const values = new Map<number, string | null>([[0, null]]);
        for (const number of Object.values(enumType.values)) {
          const value = this.model.graphqlEnumValue(enumType, kind.name, number);
          if (value !== undefined) values.set(number, value);
        }
        return { kind: 'enum', values, absent: values.get(0), enumType, graphqlName: kind.name };
      }
      case 'object':
        if (!isMessageType(slot.type)) return invalid(`expected a message for ${kind.name}, found ${slot.scalar}`, slot);
        return { kind: 'object', messageType: slot.type, objectType: kind.type };
      case 'abstract': {
        if (!isMessageType(slot.type)) return invalid(`expected a message for ${kind.name}, found ${slot.scalar}`, slot);
        const messageType = slot.type;
        const oneof = messageType.oneofsArray[0];
        if (!oneof) return invalid(`expected a oneof in ${messageType.name} for an interface or union`, slot);
        const members = new Map<number, OneofMember>();
        for (const member of oneof.fieldsArray) {
          const memberType = member.resolvedType ?? undefined;
          if (!isMessageType(memberType)) continue;
          const objectType = this.schema.getType(memberType.name);
          members.set(member.id, {
            messageType: memberType,
            objectType: isObjectType(objectType) ? objectType : undefined,
            error: isObjectType(objectType) ? undefined : new ProtoShapeError(`oneof member ${member.name} of ${messageType.name} is no object type of the schema`),
          });
        }
        return { kind: 'abstract', members };
      }
      case 'scalar': {
        if (slot.wrapped !== undefined && isMessageType(slot.type)) {
          const valueField = slot.type.fields.value;
          if (!valueField || !isScalarType(slot.wrapped)) return invalid(`expected a scalar wrapper for ${kind.name}, found ${slot.scalar}`, slot);
          return { kind: 'wrapped', valueNumber: valueField.id, value: scalarCodec(slot.wrapped) };
        }
        if (slot.type !== undefined || !isScalarType(slot.scalar)) return invalid(`expected a scalar for ${kind.name}, found ${slot.scalar}`, slot, false);
        return scalarCodec(slot.scalar);
      }
    }
  }
}
