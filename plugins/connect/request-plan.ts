/**
 * Request message -> GraphQL variables. Built once per method and graph:
 * each field of the request message is matched to an operation variable
 * (the `(graphql_variable_name)` option, else its name), and each field of
 * a nested message to an input object field, with a converter for its type.
 */
import type { DescEnum, DescField, DescMessage, ScalarType } from '@bufbuild/protobuf';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  print,
  typeFromAST,
  type GraphQLEnumType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { invalidArgument } from './connect-errors.js';
import { enumValueMatcher, matchKey } from './field-names.js';
import { isFloatScalar, scalarMisfit, wrappedScalar } from './scalar-fit.js';

/** A value read from a message field -> a GraphQL value; `undefined` leaves the variable or field out. */
type Convert = (value: unknown, at: string) => unknown;

interface FieldStep {
  readonly localName: string;
  /** Variable or input field name. */
  readonly target: string;
  /** The field's JSON name, for messages. */
  readonly label: string;
  readonly convert: Convert;
}

/**
 * What one plan's converters share: the converter of each (proto message,
 * input type) pair built so far. A recursive input type
 * (`input Node { children: [Node!] }`, a message that holds itself, legal
 * proto3) reaches its own pair again while it is being built and gets the
 * same converter, so building ends; converting ends with the message, whose
 * depth the decoder bounds (message-depth.ts).
 */
interface PlanContext {
  readonly messages: Map<string, Convert>;
}

/** Turns a request message into the operation's variables. */
export type VariablesFromMessage = (message: Record<string, unknown>) => Record<string, unknown>;

/** A proto field or variable that does not match: the contract is older than its operations or than the graph. */
export class PlanMismatch extends Error {
  override readonly name = 'PlanMismatch';
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false || value === BigInt(0) || (value instanceof Uint8Array && value.length === 0);
}

function scalarIn(value: unknown): unknown {
  // 64-bit integers arrive as bigint; GraphQL's Int and custom scalars take numbers.
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  return value;
}

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/**
 * The converter of a proto scalar (or its wrapper) for a GraphQL scalar or
 * enum. Values the proto type holds but GraphQL does not (NaN and the
 * infinities in a double, an int64 past Int's 32 bits) are the client's
 * `invalid_argument`, named by their field.
 */
function scalarConverter(proto: ScalarType, named: GraphQLNamedType, path: string): Convert {
  const misfit = scalarMisfit(proto, named);
  if (misfit !== undefined) throw new PlanMismatch(`${path}: ${misfit}`);
  const isInt = named.name === 'Int';
  const isFloat = isFloatScalar(proto);
  return (value, at) => {
    const converted = scalarIn(value);
    if (converted === undefined || converted === null) return converted;
    if (isFloat && typeof converted === 'number' && !Number.isFinite(converted)) throw invalidArgument(`${at}: ${String(converted)} is not a number GraphQL can carry`);
    if (isInt && (typeof converted !== 'number' || converted < INT_MIN || converted > INT_MAX))
      throw invalidArgument(`${at}: ${String(value)} is outside GraphQL Int's 32-bit range`);
    return converted;
  };
}

function enumIn(protoEnum: DescEnum, graphqlEnum: GraphQLEnumType): Convert {
  const names = enumValueMatcher(
    protoEnum.values.map((v) => v.name),
    graphqlEnum.getValues().map((v) => v.name),
  );
  const byNumber = new Map<number, string>();
  for (const value of protoEnum.values) {
    const graphql = names.get(value.name);
    if (graphql !== undefined) byNumber.set(value.number, graphql);
  }
  return (value, at) => {
    if (value === 0 || value === undefined) return undefined;
    const graphql = byNumber.get(value as number);
    if (graphql === undefined) throw invalidArgument(`${at}: ${String(value)} is not a value of ${protoEnum.name}`);
    return graphql;
  };
}

/** The converter of one value (a list item, or a singular field) of a proto field for a GraphQL type without its list. */
function itemConverter(field: DescField, kind: 'scalar' | 'enum' | 'message', type: GraphQLInputType, context: PlanContext, path: string): Convert {
  const named = getNamedType(type);
  if (kind === 'enum') {
    if (!isEnumType(named)) throw new PlanMismatch(`${path}: the proto has an enum where the operation has ${named.name}`);
    return enumIn(field.enum!, named);
  }
  if (kind === 'message') {
    const message = field.message!;
    const wrapped = wrappedScalar(message);
    if (wrapped !== undefined) {
      const convert = scalarConverter(wrapped, named, path);
      return (value, at) => convert(value !== null && typeof value === 'object' && 'value' in value ? value.value : value, at);
    }
    if (!isInputObjectType(named)) throw new PlanMismatch(`${path}: the proto has message ${message.name} where the operation has ${named.name}`);
    return messageIn(message, named, context, path);
  }
  return scalarConverter(field.scalar!, named, path);
}

function required(convert: Convert, nonNull: boolean): Convert {
  if (!nonNull) return convert;
  return (value, at) => {
    const converted = convert(value, at);
    if (converted === undefined) throw invalidArgument(`${at}: required`);
    return converted;
  };
}

/** The converter of a field for a GraphQL input type (list, non-null and all). */
function fieldConverter(field: DescField, type: GraphQLInputType, context: PlanContext, path: string): Convert {
  const nonNull = isNonNullType(type);
  const inner = nonNull ? type.ofType : type;
  if (field.fieldKind === 'list') {
    if (!isListType(inner)) throw new PlanMismatch(`${path}: the proto has a list where the operation has ${String(type)}`);
    const item = itemConverter(field, field.listKind, inner.ofType, context, path);
    // Protobuf cannot tell an empty list from no list: a nullable list left empty is left out.
    return (value, at) => {
      const list = value as unknown[];
      if (list.length === 0 && !nonNull) return undefined;
      return list.map((entry, index) => item(entry, `${at}[${index}]`));
    };
  }
  if (field.fieldKind === 'map') throw new PlanMismatch(`${path}: map fields have no GraphQL counterpart`);
  if (isListType(inner)) throw new PlanMismatch(`${path}: the operation has a list (${String(type)}) where the proto has a single value`);
  const convert = itemConverter(field, field.fieldKind, inner, context, path);
  // A proto scalar has no "unset": for a nullable GraphQL value (a custom scalar as `string`), its zero value means null.
  if (field.fieldKind === 'scalar' && !nonNull) return (value, at) => (isZero(value) ? undefined : convert(value, at));
  return required(convert, nonNull);
}

function stepsToFunction(steps: readonly FieldStep[]): Convert {
  return (value, at) => {
    if (value === undefined || value === null) return undefined;
    const message = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const step of steps) {
      const converted = step.convert(message[step.localName], at === '' ? step.label : `${at}.${step.label}`);
      if (converted !== undefined) out[step.target] = converted;
    }
    return out;
  };
}

function messageIn(message: DescMessage, input: GraphQLInputObjectType, context: PlanContext, path: string): Convert {
  const key = `${message.typeName} ${input.name}`;
  const known = context.messages.get(key);
  if (known) return known;
  // Registered before its fields are built: a field of the same pair (recursion) calls through it.
  let convert: Convert | undefined;
  context.messages.set(key, function convertMessage(value, at) {
    return convert!(value, at);
  });
  const inputFields = Object.values(input.getFields());
  const byKey = new Map(inputFields.map((f) => [matchKey(f.name), f]));
  const steps: FieldStep[] = [];
  const covered = new Set<string>();
  for (const field of message.fields) {
    const target = byKey.get(matchKey(field.name));
    if (!target) throw new PlanMismatch(`${path}: proto field ${message.name}.${field.name} matches no field of input ${input.name}`);
    covered.add(target.name);
    steps.push({ localName: field.localName, target: target.name, label: field.jsonName, convert: fieldConverter(field, target.type, context, `${path}.${target.name}`) });
  }
  const missing = inputFields.find((f) => !covered.has(f.name) && isNonNullType(f.type) && f.defaultValue === undefined);
  if (missing) throw new PlanMismatch(`${path}: required field ${input.name}.${missing.name} has no field in proto message ${message.name}`);
  convert = stepsToFunction(steps);
  return convert;
}

/**
 * Builds the variables converter of a method. `variableNames` are the
 * `(graphql_variable_name)` options of the proto. Throws `PlanMismatch`
 * when the message and the operation's variables do not correspond.
 */
export function buildRequestPlan(
  message: DescMessage,
  operation: OperationDefinitionNode,
  schema: GraphQLSchema,
  variableNames: ReadonlyMap<string, string>,
): VariablesFromMessage {
  const definitions = operation.variableDefinitions ?? [];
  const byKey = new Map(definitions.map((d) => [matchKey(d.variable.name.value), d]));
  const byName = new Map(definitions.map((d) => [d.variable.name.value, d]));
  const context: PlanContext = { messages: new Map() };
  const steps: FieldStep[] = [];
  const covered = new Set<string>();
  for (const field of message.fields) {
    const named = variableNames.get(`${message.typeName}.${field.name}`);
    const definition = named === undefined ? byKey.get(matchKey(field.name)) : byName.get(named);
    if (!definition) throw new PlanMismatch(`proto field ${message.name}.${field.name} matches no variable of the operation`);
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) throw new PlanMismatch(`variable $${name}: type ${print(definition.type)} is not in the graph`);
    covered.add(name);
    // A variable with a default is optional whatever its type says.
    const effective = definition.defaultValue !== undefined && isNonNullType(type) ? type.ofType : type;
    steps.push({ localName: field.localName, target: name, label: field.jsonName, convert: fieldConverter(field, effective, context, `$${name}`) });
  }
  const missing = definitions.find((d) => !covered.has(d.variable.name.value));
  if (missing) throw new PlanMismatch(`variable $${missing.variable.name.value} has no field in proto message ${message.name}`);
  const convert = stepsToFunction(steps);
  return (value) => convert(value, '') as Record<string, unknown>;
}
