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
import { ProtoShapeError, isEnumType, isMessageType, itemSlot, listItemsField, slotOf, type Slot } from './proto-slot.js';
import type { ResolverRpc, ServiceModel } from './service-model.js';

/** A decoded proto message (protobufjs reflection), read by field name. */
export type ProtoMessage = Readonly<Record<string, unknown>>;

/** A response path: keys and list indexes. */
export type ResponsePath = ReadonlyArray<string | number>;

/** A response path as a chain, cheap to extend for every value; `pathOf` makes it an array. */
export interface PathLink {
  readonly prev: PathLink | undefined;
  readonly key: string | number;
}

/** `prev` extended by `key`. */
export function at(prev: PathLink | undefined, key: string | number): PathLink {
  return { prev, key };
}

/** The path a chain stands for. */
export function pathOf(link: PathLink | undefined): (string | number)[] {
  const path: (string | number)[] = [];
  for (let node = link; node; node = node.prev) path.push(node.key);
  return path.reverse();
}

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
  readonly path: PathLink;
}

/** Builds GraphQL JSON from proto messages for one fetch; collects resolver jobs on the way. */
export class ResponseBuilder {
  /** Resolver fields met so far, not yet fetched. */
  readonly jobs: ResolverJob[] = [];
  /** Collected fields by selection set and type: list items share one selection, and variables are fixed per fetch. */
  private readonly collected = new Map<SelectionSetNode, Map<string, Map<string, FieldNode[]>>>();
  private readonly subSelections = new WeakMap<readonly FieldNode[], readonly SelectionSetNode[]>();

  constructor(
    private readonly model: ServiceModel,
    private readonly collect: CollectContext,
  ) {}

  /** A field's value from its proto slot. Null stays null; the router applies non-null rules when it merges. */
  completeValue(value: unknown, slot: Slot, type: GraphQLOutputType, nodes: readonly FieldNode[], path: PathLink | undefined): unknown {
    const named = kindOf(type);
    switch (named.kind) {
      case 'list':
        return this.completeList(value, slot, named.itemType, nodes, path);
      case 'enum':
        if (value === null || value === undefined) return null;
        if (!isEnumType(slot.type)) throw new ProtoShapeError(`expected a proto enum for ${named.name}, found ${slot.scalar}`);
        return this.model.graphqlEnumValue(slot.type, named.name, Number(value)) ?? null;
      case 'object':
      case 'abstract':
        if (value === null || value === undefined) return null;
        if (!isMessageType(slot.type)) throw new ProtoShapeError(`expected a message for ${named.name}, found ${slot.scalar}`);
        if (named.kind === 'object') return this.completeObject(value as ProtoMessage, slot.type, named.type, this.selectionsOf(nodes), path);
        return this.completeAbstract(value as ProtoMessage, slot.type, nodes, path);
      case 'scalar':
        if (slot.wrapped !== undefined) return value === null || value === undefined ? null : scalarFromProto((value as ProtoMessage).value);
        if (slot.type !== undefined) throw new ProtoShapeError(`expected a scalar for ${named.name}, found ${slot.scalar}`);
        return scalarFromProto(value);
    }
  }

  /** The selected fields of an object of `type` read from its message. */
  completeObject(message: ProtoMessage, messageType: Type, type: GraphQLObjectType, selections: readonly SelectionSetNode[], path: PathLink | undefined): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    const definitions = type.getFields();
    for (const [key, nodes] of this.fieldsOf(type, selections)) {
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
        this.jobs.push({ resolver, field, nodes, parent: message, target: object, key, path: at(path, key) });
        continue;
      }
      const protoField = messageType.fields[this.model.protoField(type.name, name)];
      // Absent from the message: an @external or @requires field, filled by another RPC or not at all.
      if (!protoField) continue;
      object[key] = this.completeValue(message[protoField.name], slotOf(protoField), field.type, nodes, at(path, key));
    }
    return object;
  }

  private selectionsOf(nodes: readonly FieldNode[]): readonly SelectionSetNode[] {
    let selections = this.subSelections.get(nodes);
    if (!selections) this.subSelections.set(nodes, (selections = subSelections(nodes)));
    return selections;
  }

  private fieldsOf(type: GraphQLObjectType, selections: readonly SelectionSetNode[]): Map<string, FieldNode[]> {
    if (selections.length !== 1) return collectFields(this.collect, type, selections);
    let byType = this.collected.get(selections[0]!);
    if (!byType) this.collected.set(selections[0]!, (byType = new Map()));
    let fields = byType.get(type.name);
    if (!fields) byType.set(type.name, (fields = collectFields(this.collect, type, selections)));
    return fields;
  }

  private completeList(value: unknown, slot: Slot, itemType: GraphQLOutputType, nodes: readonly FieldNode[], path: PathLink | undefined): unknown {
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
    return items.map((item, index) => this.completeValue(item, inner, itemType, nodes, at(path, index)));
  }

  /** An interface or union: the message's `oneof` says which object type it is. */
  private completeAbstract(message: ProtoMessage, messageType: Type, nodes: readonly FieldNode[], path: PathLink | undefined): unknown {
    const oneof = messageType.oneofsArray[0];
    if (!oneof) throw new ProtoShapeError(`expected a oneof in ${messageType.name} for an interface or union`);
    for (const member of oneof.fieldsArray) {
      const value = message[member.name];
      if (value === null || value === undefined || !isMessageType(member.resolvedType ?? undefined)) continue;
      const type = this.collect.schema.getType(member.resolvedType!.name);
      if (!isObjectType(type)) throw new ProtoShapeError(`oneof member ${member.name} of ${messageType.name} is no object type of the schema`);
      return this.completeObject(value as ProtoMessage, member.resolvedType as Type, type, this.selectionsOf(nodes), path);
    }
    return null;
  }
}

/** What completing a value of a GraphQL output type does, non-null stripped (schema types live as long as the graph). */
type TypeKind =
  | { readonly kind: 'list'; readonly itemType: GraphQLOutputType }
  | { readonly kind: 'enum' | 'abstract' | 'scalar'; readonly name: string }
  | { readonly kind: 'object'; readonly name: string; readonly type: GraphQLObjectType };

const kinds = new WeakMap<GraphQLOutputType, TypeKind>();

function kindOf(type: GraphQLOutputType): TypeKind {
  let kind = kinds.get(type);
  if (!kind) {
    const nullable = isNonNullType(type) ? type.ofType : type;
    if (isListType(nullable)) kind = { kind: 'list', itemType: nullable.ofType };
    else if (isObjectType(nullable)) kind = { kind: 'object', name: nullable.name, type: nullable };
    else kind = { kind: isGraphQLEnum(nullable) ? 'enum' : isAbstractType(nullable) ? 'abstract' : 'scalar', name: nullable.name };
    kinds.set(type, kind);
  }
  return kind;
}

function scalarFromProto(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  // 64-bit integers decode as Long objects when the long package is present.
  if (typeof value === 'object' && 'toNumber' in value && typeof value.toNumber === 'function') return (value.toNumber as () => number)();
  return value;
}
