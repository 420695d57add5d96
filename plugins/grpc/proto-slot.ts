/**
 * How a proto field carries a GraphQL value: repeated or not, and its
 * message or enum type. The generator wraps nullable scalars in
 * `google.protobuf.*Value` and nullable or nested lists in `ListOf...`
 * messages (`{ list: { items: [...] } }`); both directions read that shape here.
 */
import type { Enum, Field, Type } from 'protobufjs';

/** The shape of one proto field (or of one item of a repeated field). */
export interface Slot {
  readonly repeated: boolean;
  /** The message or enum type; `undefined` for scalars. */
  readonly type: Type | Enum | undefined;
  /** Proto type name: `string`, `int32`, ... or the message/enum name. */
  readonly scalar: string;
}

/** Thrown when the proto does not have the shape the GraphQL type needs (a stale generation). */
export class ProtoShapeError extends Error {
  override readonly name = 'ProtoShapeError';
}

export function slotOf(field: Field): Slot {
  return { repeated: field.repeated, type: field.resolvedType ?? undefined, scalar: field.type };
}

/** The same slot, one item of it. */
export function itemSlot(slot: Slot): Slot {
  return { ...slot, repeated: false };
}

export function isMessageType(type: Type | Enum | undefined): type is Type {
  return type !== undefined && 'fieldsArray' in type;
}

export function isEnumType(type: Type | Enum | undefined): type is Enum {
  return type !== undefined && 'valuesById' in type;
}

/** `google.protobuf.StringValue` and its siblings: a nullable scalar. */
export function isScalarWrapper(type: Type | Enum | undefined): type is Type {
  return isMessageType(type) && type.fullName.startsWith('.google.protobuf.') && type.fullName.endsWith('Value') && type.fields.value !== undefined;
}

/** For a `ListOf...` wrapper message, the repeated `items` field of its nested `List`; else `undefined`. */
export function listItemsField(type: Type | Enum | undefined): Field | undefined {
  if (!isMessageType(type)) return undefined;
  const list = type.fields.list?.resolvedType ?? undefined;
  if (!isMessageType(list)) return undefined;
  const items = list.fields.items;
  return items?.repeated ? items : undefined;
}
