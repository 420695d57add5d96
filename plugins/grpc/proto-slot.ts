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
  /** For a `google.protobuf.*Value` wrapper (a nullable scalar): the proto type of its `value`. */
  readonly wrapped: string | undefined;
}

/** Thrown when the proto does not have the shape the GraphQL type needs (a stale generation). */
export class ProtoShapeError extends Error {
  override readonly name = 'ProtoShapeError';
}

// Slots are read for every value of every response: computed once per field.
const slots = new WeakMap<Field, Slot>();
const items = new WeakMap<Slot, Slot>();
const listItems = new WeakMap<Type, Field | null>();

function wrappedScalar(type: Type | Enum | undefined): string | undefined {
  if (!isMessageType(type) || !type.fullName.startsWith('.google.protobuf.') || !type.fullName.endsWith('Value')) return undefined;
  return type.fields.value?.type;
}

export function slotOf(field: Field): Slot {
  let slot = slots.get(field);
  if (!slot) {
    const type = field.resolvedType ?? undefined;
    slot = { repeated: field.repeated, type, scalar: field.type, wrapped: wrappedScalar(type) };
    slots.set(field, slot);
  }
  return slot;
}

/** The same slot, one item of it. */
export function itemSlot(slot: Slot): Slot {
  if (!slot.repeated) return slot;
  let item = items.get(slot);
  if (!item) items.set(slot, (item = { ...slot, repeated: false }));
  return item;
}

export function isMessageType(type: Type | Enum | undefined): type is Type {
  return type !== undefined && 'fieldsArray' in type;
}

export function isEnumType(type: Type | Enum | undefined): type is Enum {
  return type !== undefined && 'valuesById' in type;
}

/** For a `ListOf...` wrapper message, the repeated `items` field of its nested `List`; else `undefined`. */
export function listItemsField(type: Type | Enum | undefined): Field | undefined {
  if (!isMessageType(type)) return undefined;
  let field = listItems.get(type);
  if (field === undefined) {
    const list = type.fields.list?.resolvedType ?? undefined;
    const candidate = isMessageType(list) ? list.fields.items : undefined;
    field = candidate?.repeated ? candidate : null;
    listItems.set(type, field);
  }
  return field ?? undefined;
}
