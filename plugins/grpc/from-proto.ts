/**
 * Proto messages -> GraphQL JSON for the fetch's selection set: aliases,
 * fragments, `__typename`, wrapper and `ListOf...` unwrapping, enum values,
 * `oneof` members for interfaces and unions. Fields with their own resolver
 * RPC are left null and queued as jobs, run in batches afterwards.
 */
import { isObjectType, type FieldNode, type GraphQLField, type GraphQLObjectType, type GraphQLOutputType, type SelectionSetNode } from 'graphql';
import type { Type } from 'protobufjs';
import { subSelections, type CollectContext } from './collect-fields.js';
import { ObjectPlans, kindOf, type TypeKind } from './object-plans.js';
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
  private readonly plans: ObjectPlans;
  /** Paths are only read by resolver jobs: without resolvers, no value pays for one. */
  private readonly tracksPaths: boolean;
  private readonly subSelections = new WeakMap<readonly FieldNode[], readonly SelectionSetNode[]>();

  constructor(
    private readonly model: ServiceModel,
    private readonly collect: CollectContext,
  ) {
    this.plans = new ObjectPlans(model, collect);
    this.tracksPaths = model.resolvers.size > 0;
  }

  /** A field's value from its proto slot. Null stays null; the router applies non-null rules when it merges. */
  completeValue(value: unknown, slot: Slot, type: GraphQLOutputType, nodes: readonly FieldNode[], path: PathLink | undefined): unknown {
    let selections = this.subSelections.get(nodes);
    if (!selections) this.subSelections.set(nodes, (selections = subSelections(nodes)));
    return this.complete(value, slot, kindOf(type), selections, path);
  }

  /** The selected fields of an object of `type` read from its message. */
  completeObject(message: ProtoMessage, messageType: Type, type: GraphQLObjectType, selections: readonly SelectionSetNode[], path: PathLink | undefined): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    for (const step of this.plans.stepsFor(type, messageType, selections)) {
      switch (step.kind) {
        case 'value':
          object[step.key] = this.complete(message[step.protoName], step.slot, step.type, step.selections, this.tracksPaths ? at(path, step.key) : undefined);
          break;
        case 'typename':
          object[step.key] = step.typeName;
          break;
        case 'null':
          object[step.key] = null;
          break;
        case 'resolver':
          object[step.key] = null;
          this.jobs.push({ resolver: step.resolver, field: step.field, nodes: step.nodes, parent: message, target: object, key: step.key, path: at(path, step.key) });
          break;
      }
    }
    return object;
  }

  private complete(value: unknown, slot: Slot, kind: TypeKind, selections: readonly SelectionSetNode[], path: PathLink | undefined): unknown {
    switch (kind.kind) {
      case 'list':
        return this.completeList(value, slot, kind.item, selections, path);
      case 'enum':
        if (value === null || value === undefined) return null;
        if (!isEnumType(slot.type)) throw new ProtoShapeError(`expected a proto enum for ${kind.name}, found ${slot.scalar}`);
        return this.model.graphqlEnumValue(slot.type, kind.name, Number(value)) ?? null;
      case 'object':
      case 'abstract':
        if (value === null || value === undefined) return null;
        if (!isMessageType(slot.type)) throw new ProtoShapeError(`expected a message for ${kind.name}, found ${slot.scalar}`);
        if (kind.kind === 'object') return this.completeObject(value as ProtoMessage, slot.type, kind.type, selections, path);
        return this.completeAbstract(value as ProtoMessage, slot.type, selections, path);
      case 'scalar':
        if (slot.wrapped !== undefined) return value === null || value === undefined ? null : scalarFromProto((value as ProtoMessage).value);
        if (slot.type !== undefined) throw new ProtoShapeError(`expected a scalar for ${kind.name}, found ${slot.scalar}`);
        return scalarFromProto(value);
    }
  }

  private completeList(value: unknown, slot: Slot, item: TypeKind, selections: readonly SelectionSetNode[], path: PathLink | undefined): unknown {
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
    // Decoded strings and booleans are their JSON values already, and the decoded array is this fetch's own.
    if (item.kind === 'scalar' && inner.type === undefined && (inner.scalar === 'string' || inner.scalar === 'bool') && !Object.isFrozen(items)) return items;
    const track = this.tracksPaths;
    return items.map((entry, index) => this.complete(entry, inner, item, selections, track ? at(path, index) : undefined));
  }

  /** An interface or union: the message's `oneof` says which object type it is. */
  private completeAbstract(message: ProtoMessage, messageType: Type, selections: readonly SelectionSetNode[], path: PathLink | undefined): unknown {
    const oneof = messageType.oneofsArray[0];
    if (!oneof) throw new ProtoShapeError(`expected a oneof in ${messageType.name} for an interface or union`);
    for (const member of oneof.fieldsArray) {
      const value = message[member.name];
      if (value === null || value === undefined || !isMessageType(member.resolvedType ?? undefined)) continue;
      const type = this.collect.schema.getType(member.resolvedType!.name);
      if (!isObjectType(type)) throw new ProtoShapeError(`oneof member ${member.name} of ${messageType.name} is no object type of the schema`);
      return this.completeObject(value as ProtoMessage, member.resolvedType as Type, type, selections, path);
    }
    return null;
  }
}

function scalarFromProto(value: unknown): unknown {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  // 64-bit integers decode as Long objects when the long package is present.
  if (typeof value === 'object' && 'toNumber' in value && typeof value.toNumber === 'function') return (value.toNumber as () => number)();
  return value;
}
