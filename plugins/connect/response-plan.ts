/**
 * GraphQL `data` -> the response message in proto3 JSON. Built once per
 * method and graph by walking the response message beside the operation's
 * selections (fragments inlined, as the generator inlines them): each proto
 * field reads the response key of the selection it was made from, under its
 * lowerCamelCase JSON name. Nulls are left out (proto3 JSON has no null for
 * a field); enum values get their proto names.
 */
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import {
  getNamedType,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type FieldNode,
} from 'graphql';
import { enumValueMatcher, matchKey } from './field-names.js';
import { PlanMismatch } from './request-plan.js';
import { scalarMisfit, wrappedScalar } from './scalar-fit.js';

/** A GraphQL value -> its proto3 JSON value; `undefined` leaves the field out. */
type Convert = (value: unknown) => unknown;

/** Turns an operation's `data` into the response message's JSON. */
export type JsonFromData = (data: Record<string, unknown>) => Record<string, unknown>;

interface Source {
  readonly selections: readonly SelectionNode[];
  readonly type: GraphQLCompositeType;
}

interface Match {
  readonly node: FieldNode;
  readonly parent: GraphQLCompositeType;
}

interface Context {
  readonly schema: GraphQLSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** Type names of the messages being built around this one: a recursive message meets its own name here. */
  readonly enclosing: ReadonlySet<string>;
}

function scalarOut(scalar: ScalarType): Convert {
  switch (scalar) {
    case ScalarType.STRING:
      // Custom scalars are strings in the proto: structured values travel as their JSON text.
      return (value) => (value === null || value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value));
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      // proto3 JSON writes 64-bit integers as strings.
      return (value) => (value === null || value === undefined ? undefined : String(value));
    case ScalarType.BOOL:
    case ScalarType.BYTES:
      return (value) => (value === null ? undefined : value);
    default:
      return (value) => (value === null || value === undefined ? undefined : typeof value === 'string' ? Number(value) : value);
  }
}

function collectMatches(sources: readonly Source[], key: string, context: Context): Match[] {
  const matches: Match[] = [];
  const walk = (selections: readonly SelectionNode[], type: GraphQLCompositeType): void => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value !== '__typename' && matchKey(selection.name.value) === key) matches.push({ node: selection, parent: type });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? context.schema.getType(selection.typeCondition.name.value) : type;
        walk(selection.selectionSet.selections, (condition as GraphQLCompositeType | undefined) ?? type);
      } else {
        const fragment = context.fragments.get(selection.name.value);
        if (fragment) walk(fragment.selectionSet.selections, (context.schema.getType(fragment.typeCondition.name.value) as GraphQLCompositeType | undefined) ?? type);
      }
    }
  };
  for (const source of sources) walk(source.selections, source.type);
  return matches;
}

function fieldType(match: Match): GraphQLOutputType | undefined {
  const parent = match.parent;
  // Unions have no fields of their own: only their members' fragments select fields.
  return 'getFields' in parent ? parent.getFields()[match.node.name.value]?.type : undefined;
}

function enumOut(field: DescField, type: GraphQLOutputType, path: string): Convert {
  const named = getNamedType(type);
  if (!isEnumType(named)) throw new PlanMismatch(`${path}: the proto has enum ${field.enum!.name} where the graph has ${named.name}`);
  const toProto = new Map<string, string>();
  for (const [proto, graphql] of enumValueMatcher(
    field.enum!.values.map((v) => v.name),
    named.getValues().map((v) => v.name),
  )) {
    toProto.set(graphql, proto);
  }
  return (value) => (typeof value === 'string' ? toProto.get(value) : undefined);
}

function itemOut(field: DescField, kind: 'scalar' | 'enum' | 'message', type: GraphQLOutputType, matches: readonly Match[], context: Context, path: string): Convert {
  if (kind === 'enum') return enumOut(field, type, path);
  const named = getNamedType(type);
  const scalar = kind === 'scalar' ? field.scalar! : wrappedScalar(field.message!);
  if (scalar !== undefined) {
    const misfit = scalarMisfit(scalar, named);
    if (misfit !== undefined) throw new PlanMismatch(`${path}: ${misfit}`);
    return scalarOut(scalar);
  }
  const message = field.message!;
  if (!isObjectType(named) && !isAbstractType(named)) throw new PlanMismatch(`${path}: the proto has message ${message.name} where the graph has ${named.name}`);
  const sources = matches.flatMap((m) => (m.node.selectionSet ? [{ selections: m.node.selectionSet.selections, type: named }] : []));
  const convert = messageOut(message, sources, context, path);
  return (value) => (value === null || value === undefined ? undefined : convert(value as Record<string, unknown>));
}

function fieldOut(field: DescField, matches: readonly Match[], context: Context, path: string): Convert {
  const type = fieldType(matches[0]!);
  if (!type) throw new PlanMismatch(`${path}: not a field of ${matches[0]!.parent.name}`);
  const inner = isNonNullType(type) ? type.ofType : type;
  if (field.fieldKind === 'list') {
    if (!isListType(inner)) throw new PlanMismatch(`${path}: the proto has a list where the graph has ${String(type)}`);
    const itemType = inner.ofType;
    const unwrapped = isNonNullType(itemType) ? itemType.ofType : itemType;
    if (isListType(unwrapped)) throw new PlanMismatch(`${path}: nested lists are not supported`);
    const item = itemOut(field, field.listKind, itemType, matches, context, path);
    // Protobuf lists cannot hold null: null items are left out.
    return (value) => {
      if (!Array.isArray(value)) return undefined;
      const out: unknown[] = [];
      for (const entry of value) {
        const converted = entry === null ? undefined : item(entry);
        if (converted !== undefined) out.push(converted);
      }
      return out;
    };
  }
  if (field.fieldKind === 'map') throw new PlanMismatch(`${path}: map fields have no GraphQL counterpart`);
  if (isListType(inner)) throw new PlanMismatch(`${path}: the graph has a list (${String(type)}) where the proto has a single value`);
  return itemOut(field, field.fieldKind, type, matches, context, path);
}

/**
 * Builds a message's converter beside the selections it was made from.
 * Building follows the selections, which are finite, so a recursive message
 * (`message User { User friend = 3; }`) ends where they do: its field the
 * operation does not select at that level is left out of the answer.
 */
function messageOut(message: DescMessage, sources: readonly Source[], outer: Context, path: string): (object: Record<string, unknown>) => Record<string, unknown> {
  const context: Context = { ...outer, enclosing: new Set(outer.enclosing).add(message.typeName) };
  const steps = message.fields.flatMap((field) => {
    const matches = collectMatches(sources, matchKey(field.name), context);
    const at = path === '' ? field.name : `${path}.${field.name}`;
    if (matches.length === 0) {
      if (field.message !== undefined && context.enclosing.has(field.message.typeName)) return [];
      throw new PlanMismatch(`proto field ${message.name}.${field.name} matches no selection of the operation (at ${at})`);
    }
    const keys = [...new Set(matches.map((m) => m.node.alias?.value ?? m.node.name.value))];
    return [{ jsonName: field.jsonName, keys, convert: fieldOut(field, matches, context, at) }];
  });
  return function toMessageJson(object) {
    const out: Record<string, unknown> = {};
    for (const step of steps) {
      let value: unknown;
      // A field selected under several aliases (or in several fragments) reads the first one the object has.
      for (const key of step.keys) {
        value = object[key];
        if (value !== undefined) break;
      }
      const converted = step.convert(value);
      if (converted !== undefined) out[step.jsonName] = converted;
    }
    return out;
  };
}

/** Builds the data converter of a method. Throws `PlanMismatch` when the message and the operation's selections do not correspond. */
export function buildResponsePlan(
  message: DescMessage,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  schema: GraphQLSchema,
): JsonFromData {
  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (!root) throw new PlanMismatch(`the graph has no ${operation.operation} type`);
  return messageOut(message, [{ selections: operation.selectionSet.selections, type: root }], { schema, fragments, enclosing: new Set() }, '');
}
