/**
 * Response bytes -> GraphQL JSON for the fetch's selection set, read straight
 * from the protobuf wire format (no protobufjs message objects in between):
 * aliases, fragments, `__typename`, wrapper and `ListOf...` unwrapping, enum
 * values, `oneof` members for interfaces and unions, packed and unpacked
 * repeated fields, fields the plan does not select skipped. Fields with
 * their own resolver RPC are left null and queued as jobs, run in batches
 * afterwards (their parent message is decoded with protobufjs, as the
 * resolver's request is built from it).
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldNode, GraphQLField, GraphQLObjectType, GraphQLOutputType, SelectionSetNode } from 'graphql';
import type { Field, Type } from 'protobufjs';
import { setOwn } from '../../src/index.js';
import { subSelections, type CollectContext } from './collect-fields.js';
import { compiledObject, decoderChecks, type CompiledObject, type GeneralReader } from './compiled-object.js';
import { decodeMessage } from './message-codec.js';
import { ObjectPlans, kindOf, type ObjectPlan, type ValueStep } from './object-plans.js';
import { ProtoShapeError, slotOf } from './proto-slot.js';
import type { ResolverRpc, ServiceModel } from './service-model.js';
import { absentValue, enumValue, type Codec } from './value-codecs.js';
import { LENGTH_DELIMITED, VARINT, WireFormatError, WireReader, expectWireType } from './wire-reader.js';

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

/** Where a message lies in the response bytes. */
export interface MessageRange {
  readonly start: number;
  readonly end: number;
}

/** Builds GraphQL JSON from the response bytes of one fetch's RPCs; collects resolver jobs on the way. */
export class ResponseBuilder implements GeneralReader<PathLink | undefined> {
  /** Resolver fields met so far, not yet fetched. */
  readonly jobs: ResolverJob[] = [];
  private readonly plans: ObjectPlans;
  /** Paths are only read by resolver jobs: without resolvers, no value pays for one. */
  private readonly tracksPaths: boolean;
  /** Tells this fetch's reads from other fetches' (plans compile once a second fetch uses them). */
  private readonly fetch = nextFetch++;
  /**
   * How objects are read while an object is checked (decoderChecks): its
   * compiled read reads what lies below it compiled, its general read
   * general, and the two whole subtrees are compared once at the top.
   */
  private checking: 'compiled' | 'general' | undefined;

  constructor(model: ServiceModel, collect: CollectContext) {
    this.plans = new ObjectPlans(model, collect);
    this.tracksPaths = model.resolvers.size > 0;
  }

  /**
   * The value of `field` of the `messageType` message in `range` of `bytes`
   * (the whole of them by default), completed as `type` for `nodes`. Null
   * stays null; the router applies non-null rules when it merges.
   */
  fieldValue(
    bytes: Buffer,
    messageType: Type,
    field: Field,
    type: GraphQLOutputType,
    nodes: readonly FieldNode[],
    path: PathLink | undefined,
    range: MessageRange = { start: 0, end: bytes.length },
  ): unknown {
    const codec = this.plans.codecs.codecFor(slotOf(field), kindOf(type));
    const selections = selectionsOf(nodes);
    return decoding(messageType, () => {
      const reader = new WireReader(bytes);
      reader.pos = range.start;
      let value = absentValue(codec);
      while (reader.pos < range.end) {
        const tag = reader.uint32();
        if (tag >>> 3 === field.id) value = this.occurrence(reader, tag & 7, codec, value, selections, path);
        else reader.skip(tag & 7);
      }
      if (reader.pos !== range.end) throw new WireFormatError('a field runs past the end of its message');
      return value;
    });
  }

  /** Where each occurrence of the repeated message field `field` (`result`) lies, in order. */
  messages(bytes: Buffer, messageType: Type, field: Field): MessageRange[] {
    return decoding(messageType, () => {
      const reader = new WireReader(bytes);
      const ranges: MessageRange[] = [];
      while (reader.pos < bytes.length) {
        const tag = reader.uint32();
        if (tag >>> 3 !== field.id) {
          reader.skip(tag & 7);
          continue;
        }
        if ((tag & 7) !== LENGTH_DELIMITED) throw new WireFormatError(`field ${field.name} is not sent as a message`);
        const end = reader.delimited();
        ranges.push({ start: reader.pos, end });
        reader.pos = end;
      }
      return ranges;
    });
  }

  /** The selected fields of an object of `type` read from the `messageType` message in `range` of `bytes`. */
  objectAt(
    bytes: Buffer,
    range: MessageRange,
    messageType: Type,
    type: GraphQLObjectType,
    selections: readonly SelectionSetNode[],
    path: PathLink | undefined,
  ): Record<string, unknown> {
    return decoding(messageType, () => {
      const reader = new WireReader(bytes);
      reader.pos = range.start;
      return this.object(reader, range.end, messageType, type, selections, path);
    });
  }

  private object(
    reader: WireReader,
    end: number,
    messageType: Type,
    type: GraphQLObjectType,
    selections: readonly SelectionSetNode[],
    path: PathLink | undefined,
  ): Record<string, unknown> {
    const plan = this.plans.planFor(type, messageType, selections);
    const compiled = this.checking === 'general' ? undefined : compiledObject(plan, this.fetch);
    if (compiled === undefined) return this.generalObject(reader, end, messageType, plan, path);
    if (!decoderChecks.enabled || this.checking === 'compiled') return compiled(reader, end, this, path);
    return this.checkedObject(compiled, reader, end, messageType, plan, path);
  }

  /** Reads an object both ways and fails when they differ (decoderChecks only); answers the general result. */
  private checkedObject(compiled: CompiledObject, reader: WireReader, end: number, messageType: Type, plan: ObjectPlan, path: PathLink | undefined): Record<string, unknown> {
    const start = reader.pos;
    const jobs = this.jobs.length;
    let fast: Record<string, unknown> | undefined;
    let fastError: unknown;
    this.checking = 'compiled';
    try {
      fast = compiled(reader, end, this, path);
    } catch (error) {
      fastError = error;
    }
    const fastEnd = reader.pos;
    // Drop what the compiled read queued (its objects are thrown away); the general read queues the same jobs for its own.
    this.jobs.length = jobs;
    reader.pos = start;
    let general: Record<string, unknown>;
    this.checking = 'general';
    try {
      general = this.generalObject(reader, end, messageType, plan, path);
    } catch (error) {
      if (fastError === undefined) throw new Error(`the compiled reader of ${messageType.name} read what the general one refused: ${String(error)}`);
      if (String(fastError) !== String(error))
        throw new Error(`the compiled reader of ${messageType.name} refused with "${String(fastError)}", the general one with "${String(error)}"`);
      throw error;
    } finally {
      this.checking = undefined;
    }
    if (fastError !== undefined) throw new Error(`the compiled reader of ${messageType.name} refused what the general one read: ${String(fastError)}`);
    // isDeepStrictEqual also sees prototypes and -0; the JSON texts also compare key order.
    const [a, b] = [JSON.stringify(fast), JSON.stringify(general)];
    if (a !== b || !isDeepStrictEqual(fast, general) || fastEnd !== reader.pos) {
      throw new Error(`the compiled reader of ${messageType.name} differs from the general one:\ncompiled: ${a.slice(0, 2000)}\ngeneral:  ${b.slice(0, 2000)}`);
    }
    return general;
  }

  private generalObject(reader: WireReader, end: number, messageType: Type, plan: ObjectPlan, path: PathLink | undefined): Record<string, unknown> {
    const start = reader.pos;
    const object: Record<string, unknown> = {};
    for (const step of plan.steps) {
      const value = step.kind === 'value' ? absentValue(step.codec) : step.kind === 'typename' ? step.typeName : null;
      // A client may alias a field `__proto__`: an own property, as JSON.parse makes, then written as any other.
      setOwn(object, step.key, value);
    }
    while (reader.pos < end) {
      const tag = reader.uint32();
      const steps = plan.byNumber[tag >>> 3];
      if (steps === undefined) {
        reader.skip(tag & 7);
        continue;
      }
      const at = reader.pos;
      for (let i = 0; i < steps.length; i++) {
        // A field selected under several keys is read once for each.
        if (i > 0) reader.pos = at;
        this.fillStep(reader, tag & 7, steps[i]!, object, path);
      }
    }
    if (reader.pos !== end) throw new WireFormatError('a field runs past the end of its message');
    if (plan.hasResolvers) {
      const parent: ProtoMessage = decodeMessage(messageType, reader.buf.subarray(start, end));
      for (const step of plan.steps) {
        if (step.kind === 'resolver')
          this.jobs.push({ resolver: step.resolver, field: step.field, nodes: step.nodes, parent, target: object, key: step.key, path: at(path, step.key) });
      }
    }
    return object;
  }

  /** Reads one occurrence of `step`'s field into `object` (also for compiled readers, for the fields they do not read inline). */
  fillStep(reader: WireReader, wireType: number, step: ValueStep, object: Record<string, unknown>, path: PathLink | undefined): void {
    object[step.key] = this.occurrence(reader, wireType, step.codec, object[step.key], step.selections, this.tracksPaths ? at(path, step.key) : undefined);
  }

  /** Reads one occurrence of a field; returns the field's value so far (repeated fields add to `current`). */
  private occurrence(reader: WireReader, wireType: number, codec: Codec, current: unknown, selections: readonly SelectionSetNode[], path: PathLink | undefined): unknown {
    if (codec.kind !== 'repeated') return this.single(reader, wireType, codec, selections, path);
    this.items(reader, wireType, codec.item, current as unknown[], selections, path);
    return current;
  }

  /** Adds the items of one occurrence of a repeated field: one item, or a packed run of numbers. */
  private items(reader: WireReader, wireType: number, item: Codec, items: unknown[], selections: readonly SelectionSetNode[], path: PathLink | undefined): void {
    const track = this.tracksPaths;
    if (wireType === LENGTH_DELIMITED && ((item.kind === 'scalar' && item.wireType !== LENGTH_DELIMITED) || item.kind === 'enum')) {
      const end = reader.delimited();
      const unpackedWireType = item.kind === 'scalar' ? item.wireType : VARINT;
      while (reader.pos < end) items.push(this.single(reader, unpackedWireType, item, selections, undefined));
      if (reader.pos !== end) throw new WireFormatError('a packed field runs past its length');
      return;
    }
    items.push(this.single(reader, wireType, item, selections, track ? at(path, items.length) : undefined));
  }

  /** One value of a non-repeated codec. */
  private single(reader: WireReader, wireType: number, codec: Codec, selections: readonly SelectionSetNode[], path: PathLink | undefined): unknown {
    switch (codec.kind) {
      case 'scalar':
        return scalar(reader, wireType, codec);
      case 'enum':
        expectWireType(wireType, VARINT);
        return enumValue(codec, reader.int32());
      case 'wrapped': {
        expectWireType(wireType, LENGTH_DELIMITED);
        const end = reader.delimited();
        let value = codec.value.absent;
        while (reader.pos < end) {
          const tag = reader.uint32();
          if (tag >>> 3 === codec.valueNumber) value = scalar(reader, tag & 7, codec.value);
          else reader.skip(tag & 7);
        }
        if (reader.pos !== end) throw new WireFormatError('a field runs past the end of its message');
        return value;
      }
      case 'object': {
        expectWireType(wireType, LENGTH_DELIMITED);
        const end = reader.delimited();
        return this.object(reader, end, codec.messageType, codec.objectType, selections, path);
      }
      case 'abstract':
        return this.abstract(reader, wireType, codec, selections, path);
      case 'listOf':
        return this.listOf(reader, wireType, codec, selections, path);
      case 'repeated': {
        // A list item that is itself a list is a ListOf message; a bare repeated codec here is a generator bug.
        throw new ProtoShapeError('a repeated field cannot be a list item');
      }
      case 'invalid':
        throw codec.error;
    }
  }

  /** An interface or union: the message's `oneof` member says which object type it is (the last one sent wins). */
  private abstract(reader: WireReader, wireType: number, codec: Codec & { kind: 'abstract' }, selections: readonly SelectionSetNode[], path: PathLink | undefined): unknown {
    expectWireType(wireType, LENGTH_DELIMITED);
    const end = reader.delimited();
    let chosen: { member: NonNullable<ReturnType<typeof codec.members.get>>; start: number; end: number } | undefined;
    while (reader.pos < end) {
      const tag = reader.uint32();
      const member = codec.members.get(tag >>> 3);
      if (member === undefined) {
        reader.skip(tag & 7);
        continue;
      }
      expectWireType(tag & 7, LENGTH_DELIMITED);
      const memberEnd = reader.delimited();
      chosen = { member, start: reader.pos, end: memberEnd };
      reader.pos = memberEnd;
    }
    if (reader.pos !== end) throw new WireFormatError('a field runs past the end of its message');
    if (!chosen) return null;
    const { member } = chosen;
    if (!member.objectType) throw member.error!;
    reader.pos = chosen.start;
    const object = this.object(reader, chosen.end, member.messageType, member.objectType, selections, path);
    reader.pos = end;
    return object;
  }

  /** A `ListOf...` wrapper: null when its `list` is absent, else the list's items. */
  private listOf(reader: WireReader, wireType: number, codec: Codec & { kind: 'listOf' }, selections: readonly SelectionSetNode[], path: PathLink | undefined): unknown {
    expectWireType(wireType, LENGTH_DELIMITED);
    const end = reader.delimited();
    let items: unknown[] | null = null;
    while (reader.pos < end) {
      const tag = reader.uint32();
      if (tag >>> 3 !== codec.listNumber) {
        reader.skip(tag & 7);
        continue;
      }
      expectWireType(tag & 7, LENGTH_DELIMITED);
      const listEnd = reader.delimited();
      const list: unknown[] = [];
      while (reader.pos < listEnd) {
        const itemTag = reader.uint32();
        if (itemTag >>> 3 === codec.itemsNumber) this.items(reader, itemTag & 7, codec.item, list, selections, path);
        else reader.skip(itemTag & 7);
      }
      if (reader.pos !== listEnd) throw new WireFormatError('a field runs past the end of its message');
      items = list;
    }
    if (reader.pos !== end) throw new WireFormatError('a field runs past the end of its message');
    return items;
  }
}

let nextFetch = 0;

const selectionsByNode = new WeakMap<FieldNode, readonly SelectionSetNode[]>();

/**
 * The selection sets under a field's nodes. Fetch texts are parsed once, so
 * a field selected once comes back as the same node every fetch (in a new
 * array each time); a field selected several times is rare and not kept.
 */
function selectionsOf(nodes: readonly FieldNode[]): readonly SelectionSetNode[] {
  if (nodes.length !== 1) return subSelections(nodes);
  const node = nodes[0]!;
  let selections = selectionsByNode.get(node);
  if (!selections) selectionsByNode.set(node, (selections = subSelections(nodes)));
  return selections;
}

/** Runs a read of a `messageType` message; bytes that do not decode become a `ProtoShapeError` naming it. */
function decoding<T>(messageType: Type, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof WireFormatError || error instanceof RangeError) throw new ProtoShapeError(`cannot decode ${messageType.name}: ${error.message}`);
    throw error;
  }
}

/** One scalar value as GraphQL JSON, bytes base64; a NaN or infinite double is kept for the response shaper to refuse (GraphQL Float has none). */
function scalar(reader: WireReader, wireType: number, codec: Codec & { kind: 'scalar' }): unknown {
  expectWireType(wireType, codec.wireType);
  switch (codec.type) {
    case 'string':
      return reader.string();
    case 'bytes':
      return reader.base64();
    case 'bool':
      return reader.bool();
    case 'int32':
      return reader.int32();
    case 'uint32':
      return reader.uint32();
    case 'sint32':
      return reader.sint32();
    case 'int64':
      return reader.varint64(true);
    case 'uint64':
      return reader.varint64(false);
    case 'sint64':
      return reader.sint64();
    case 'fixed32':
      return reader.fixed32();
    case 'sfixed32':
      return reader.sfixed32();
    case 'fixed64':
      return reader.fixed64(false);
    case 'sfixed64':
      return reader.fixed64(true);
    case 'float':
      return reader.float();
    case 'double':
      return reader.double();
  }
}
