/**
 * Proto messages -> GraphQL JSON for the fetch's selection set: aliases,
 * fragments, `__typename`, wrapper and `ListOf...` unwrapping, enum values,
 * `oneof` members for interfaces and unions. Fields with their own resolver
 * RPC are left null and queued as jobs, run in batches afterwards.
 */
import {
  isAbstractType,
  isEnumType as isGraphQLEnum,
  isListType,
  isNonNullType,
  isObjectType,
  type FieldNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type SelectionSetNode,
} from 'graphql';
import type { Type } from 'protobufjs';
import { collectFields, subSelections, type CollectContext } from './collect-fields.js';
import { ProtoShapeError, isEnumType, isMessageType, isScalarWrapper, itemSlot, listItemsField, slotOf, type Slot } from './proto-slot.js';
import type { ResolverRpc, ServiceModel } from './service-model.js';

/** A decoded proto message (protobufjs reflection), read by field name. */
export type ProtoMessage = Readonly<Record<string, unknown>>;

/** A response path: keys and list indexes. */
export type ResponsePath = ReadonlyArray<string | number>;

/** A field whose value comes from a field resolver RPC, waiting to be fetched. */
export interface ResolverJob {
  readonly resolver: ResolverRpc;
  readonly field: GraphQLField<unknown, unknown>;
  /** The field's nodes in the fetch (arguments and sub-selections). */
  readonly nodes: readonly FieldNode[];
  /** The parent's proto message: the resolver's context is read from it. */
  readonly parent: ProtoMessage;
  /** The JSON object the value goes into, under `key`. */
  readonly target: Record<string, unknown>;
  readonly key: string;
  readonly path: ResponsePath;
}

/** Builds GraphQL JSON from proto messages for one fetch; collects resolver jobs on the way. */
export class ResponseBuilder {
  /** Resolver fields met so far, not yet fetched. */
  readonly jobs: ResolverJob[] = [];

  constructor(
    private readonly model: ServiceModel,
    private readonly collect: CollectContext,
  ) {}

  /** A field's value from its proto slot. Null stays null; the router applies non-null rules when it merges. */
  completeValue(value: unknown, slot: Slot, type: GraphQLOutputType, nodes: readonly FieldNode[], path: ResponsePath): unknown {
    if (isNonNullType(type)) return this.completeValue(value, slot, type.ofType, nodes, path);
    if (isListType(type)) return this.completeList(value, slot, type.ofType, nodes, path);
    if (isGraphQLEnum(type)) {
      if (value === null || value === undefined) return null;
      if (!isEnumType(slot.type)) throw new ProtoShapeError(`expected a proto enum for ${type.name}, found ${slot.scalar}`);
      return this.model.graphqlEnumValue(slot.type, type.name, Number(value)) ?? null;
    }
    if (isObjectType(type) || isAbstractType(type)) {
      if (value === null || value === undefined) return null;
      if (!isMessageType(slot.type)) throw new ProtoShapeError(`expected a message for ${type.name}, found ${slot.scalar}`);
      if (isObjectType(type)) return this.completeObject(value as ProtoMessage, slot.type, type, subSelections(nodes), path);
      return this.completeAbstract(value as ProtoMessage, slot.type, nodes, path);
    }
    if (isScalarWrapper(slot.type)) return value === null || value === undefined ? null : scalarFromProto((value as ProtoMessage).value);
    if (slot.type !== undefined) throw new ProtoShapeError(`expected a scalar for ${type.name}, found ${slot.scalar}`);
    return scalarFromProto(value);
  }

  /** The selected fields of an object of `type` read from its message. */
  completeObject(message: ProtoMessage, messageType: Type, type: GraphQLObjectType, selections: readonly SelectionSetNode[], path: ResponsePath): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    const definitions = type.getFields();
    for (const [key, nodes] of collectFields(this.collect, type, selections)) {
      const name = nodes[0]!.name.value;
      if (name === '__typename') {
        object[key] = type.name;
        continue;
      }
      object[key] = null;
      const field = definitions[name];
      if (!field) continue;
      const resolver = this.model.resolvers.get(`${type.name}.${name}`);
      if (resolver) {
        this.jobs.push({ resolver, field, nodes, parent: message, target: object, key, path: [...path, key] });
        continue;
      }
      const protoField = messageType.fields[this.model.protoField(type.name, name)];
      // Absent from the message: an @external or @requires field, filled by another RPC or not at all.
      if (!protoField) continue;
      object[key] = this.completeValue(message[protoField.name], slotOf(protoField), field.type, nodes, [...path, key]);
    }
    return object;
  }

  private completeList(value: unknown, slot: Slot, itemType: GraphQLOutputType, nodes: readonly FieldNode[], path: ResponsePath): unknown {
    let items: readonly unknown[];
    let inner: Slot;
    if (slot.repeated) {
      items = Array.isArray(value) ? value : [];
      inner = itemSlot(slot);
    } else {
      const field = listItemsField(slot.type);
      if (!field) throw new ProtoShapeError(`expected a repeated field or a ListOf wrapper, found ${slot.scalar}`);
      const list = value === null || value === undefined ? undefined : (value as ProtoMessage).list;
      if (list === null || list === undefined) return null;
      const raw = (list as ProtoMessage).items;
      items = Array.isArray(raw) ? raw : [];
      inner = itemSlot(slotOf(field));
    }
    return items.map((item, index) => this.completeValue(item, inner, itemType, nodes, [...path, index]));
  }

  /** An interface or union: the message's `oneof` says which object type it is. */
  private completeAbstract(message: ProtoMessage, messageType: Type, nodes: readonly FieldNode[], path: ResponsePath): unknown {
    const oneof = messageType.oneofsArray[0];
    if (!oneof) throw new ProtoShapeError(`expected a oneof in ${messageType.name} for an interface or union`);
    for (const member of oneof.fieldsArray) {
      const value = message[member.name];
      if (value === null || value === undefined || !isMessageType(member.resolvedType ?? undefined)) continue;
      const type = this.collect.schema.getType(member.resolvedType!.name);
      if (!isObjectType(type)) throw new ProtoShapeError(`oneof member ${member.name} of ${messageType.name} is no object type of the schema`);
      return this.completeObject(value as ProtoMessage, member.resolvedType as Type, type, subSelections(nodes), path);
    }
    return null;
  }
}

function scalarFromProto(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  // 64-bit integers decode as Long objects when the long package is present.
  if (typeof value === 'object' && 'toNumber' in value && typeof value.toNumber === 'function') return (value.toNumber as () => number)();
  return value;
}
