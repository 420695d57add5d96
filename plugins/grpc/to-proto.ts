/**
 * GraphQL values (arguments, entity keys, `@requires` fields) -> plain objects
 * in the shape protobufjs' `Type.fromObject` reads, following the generator's
 * conventions: wrapper messages for nullable scalars, `ListOf...` messages for
 * nullable and nested lists, prefixed enum values, custom scalars as strings.
 */
import {
  isEnumType as isGraphQLEnum,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLType,
} from 'graphql';
import type { Type } from 'protobufjs';
import { ProtoShapeError, isEnumType, isMessageType, itemSlot, listItemsField, slotOf, type Slot } from './proto-slot.js';
import type { ServiceModel } from './service-model.js';

/** A value the router cannot put into the request (an enum value the service does not know). */
export class RequestValueError extends Error {
  override readonly name = 'RequestValueError';
}

/** A GraphQL value as proto input, or `undefined` for null (left unset). */
export function toProto(model: ServiceModel, value: unknown, type: GraphQLType, slot: Slot): unknown {
  if (value === null || value === undefined) return undefined;
  if (isNonNullType(type)) return toProto(model, value, type.ofType, slot);
  if (isListType(type)) {
    const items = Array.isArray(value) ? value : [value];
    if (slot.repeated) return items.map((item) => toProto(model, item, type.ofType, itemSlot(slot)));
    const field = listItemsField(slot.type);
    if (!field) throw new ProtoShapeError(`expected a repeated field or a ListOf wrapper for ${String(type)}, found ${slot.scalar}`);
    const inner = itemSlot(slotOf(field));
    return { list: { items: items.map((item) => toProto(model, item, type.ofType, inner)) } };
  }
  if (isGraphQLEnum(type)) {
    if (!isEnumType(slot.type)) throw new ProtoShapeError(`expected a proto enum for ${type.name}, found ${slot.scalar}`);
    const number = model.protoEnumValue(slot.type, type.name, String(value));
    if (number === undefined) throw new RequestValueError(`enum ${type.name} has no value ${String(value)} in the service's proto`);
    return number;
  }
  if (isScalarType(type)) {
    if (slot.wrapped !== undefined) return { value: scalarToProto(value, slot.wrapped) };
    return scalarToProto(value, slot.scalar);
  }
  if (isInputObjectType(type) || isObjectType(type)) {
    if (!isMessageType(slot.type)) throw new ProtoShapeError(`expected a message for ${type.name}, found ${slot.scalar}`);
    return messageToProto(model, type.name, type.getFields(), value, slot.type);
  }
  throw new RequestValueError(`${String(type)} cannot be sent to a gRPC service (abstract types are not supported as input)`);
}

/** An object of a GraphQL input or object type as a proto message object; fields the message lacks are left out. */
export function messageToProto(
  model: ServiceModel,
  typeName: string,
  fields: Readonly<Record<string, GraphQLInputField | GraphQLField<unknown, unknown>>>,
  value: unknown,
  message: Type,
): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  if (value === null || typeof value !== 'object') return object;
  const input = value as Record<string, unknown>;
  for (const [name, definition] of Object.entries(fields)) {
    if (!Object.hasOwn(input, name)) continue;
    const protoName = model.protoField(typeName, name);
    const field = message.fields[protoName];
    if (!field) continue;
    const converted = toProto(model, input[name], definition.type, slotOf(field));
    if (converted !== undefined) object[protoName] = converted;
  }
  return object;
}

function scalarToProto(value: unknown, protoType: string): unknown {
  switch (protoType) {
    case 'string':
      // Custom scalars travel as strings; structured values (a JSON scalar) as their JSON text.
      return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'bool':
      return Boolean(value);
    case 'bytes':
      return typeof value === 'string' ? Buffer.from(value, 'base64') : value;
    default:
      return typeof value === 'number' ? value : Number(value);
  }
}
