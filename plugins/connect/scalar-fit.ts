/**
 * Which proto scalar types can carry which GraphQL scalars, both ways. The
 * generator writes Int as int32, Float as double, ID, String and custom
 * scalars as string, Boolean as bool (nullable ones in the matching
 * `google.protobuf.*Value` wrapper); a hand-edited contract may widen an
 * integer or a float, but a type that cannot hold every value of the
 * GraphQL scalar (`uint64` for an ID, `bytes` for a JSON scalar) would
 * write answers that are not proto3 JSON or fail every call: such a method
 * is refused when the contract is bound to the graph.
 */
import { ScalarType, type DescMessage } from '@bufbuild/protobuf';
import { isEnumType, isScalarType, type GraphQLNamedType } from 'graphql';

/** The well-known wrapper messages (a nullable scalar in generated contracts) by the scalar each wraps. */
const WRAPPER_SCALARS: Readonly<Record<string, ScalarType>> = {
  'google.protobuf.DoubleValue': ScalarType.DOUBLE,
  'google.protobuf.FloatValue': ScalarType.FLOAT,
  'google.protobuf.Int64Value': ScalarType.INT64,
  'google.protobuf.UInt64Value': ScalarType.UINT64,
  'google.protobuf.Int32Value': ScalarType.INT32,
  'google.protobuf.UInt32Value': ScalarType.UINT32,
  'google.protobuf.BoolValue': ScalarType.BOOL,
  'google.protobuf.StringValue': ScalarType.STRING,
  'google.protobuf.BytesValue': ScalarType.BYTES,
};

/** The scalar a wrapper message holds, or undefined for another message. */
export function wrappedScalar(message: DescMessage): ScalarType | undefined {
  return Object.hasOwn(WRAPPER_SCALARS, message.typeName) ? WRAPPER_SCALARS[message.typeName] : undefined;
}

const SIGNED_INTEGERS = [ScalarType.INT32, ScalarType.SINT32, ScalarType.SFIXED32, ScalarType.INT64, ScalarType.SINT64, ScalarType.SFIXED64];
const FLOATS = [ScalarType.DOUBLE, ScalarType.FLOAT];

const BUILT_IN: Readonly<Record<string, readonly ScalarType[]>> = {
  Int: SIGNED_INTEGERS,
  Float: FLOATS,
  String: [ScalarType.STRING],
  ID: [ScalarType.STRING],
  Boolean: [ScalarType.BOOL],
};

/**
 * Custom scalars: their text, or whatever scalar a contract declares for one
 * (`--custom-scalar-mapping '{"UnsignedLong":"uint64"}'`, a flag as bool):
 * the scalar's own rules decide its values. Not bytes, which GraphQL has no
 * value for.
 */
const CUSTOM = [ScalarType.STRING, ...SIGNED_INTEGERS, ...FLOATS, ScalarType.UINT32, ScalarType.UINT64, ScalarType.FIXED32, ScalarType.FIXED64, ScalarType.BOOL];

/** Proto names of scalar types, for messages. */
const PROTO_NAMES: Readonly<Partial<Record<ScalarType, string>>> = {
  [ScalarType.DOUBLE]: 'double',
  [ScalarType.FLOAT]: 'float',
  [ScalarType.INT64]: 'int64',
  [ScalarType.UINT64]: 'uint64',
  [ScalarType.INT32]: 'int32',
  [ScalarType.FIXED64]: 'fixed64',
  [ScalarType.FIXED32]: 'fixed32',
  [ScalarType.BOOL]: 'bool',
  [ScalarType.STRING]: 'string',
  [ScalarType.BYTES]: 'bytes',
  [ScalarType.UINT32]: 'uint32',
  [ScalarType.SFIXED32]: 'sfixed32',
  [ScalarType.SFIXED64]: 'sfixed64',
  [ScalarType.SINT32]: 'sint32',
  [ScalarType.SINT64]: 'sint64',
};

/** Why the proto scalar cannot carry values of the GraphQL type, or undefined when it can (an enum value travels as its name in a string). */
export function scalarMisfit(proto: ScalarType, graphql: GraphQLNamedType): string | undefined {
  if (!isScalarType(graphql) && !isEnumType(graphql)) return `the proto has ${PROTO_NAMES[proto] ?? String(proto)} where the graph has ${graphql.name}`;
  const fits = isEnumType(graphql) ? [ScalarType.STRING] : Object.hasOwn(BUILT_IN, graphql.name) ? BUILT_IN[graphql.name]! : CUSTOM;
  if (fits.includes(proto)) return undefined;
  const allowed = fits.map((scalar) => PROTO_NAMES[scalar]).join(', ');
  return `the proto has ${PROTO_NAMES[proto] ?? String(proto)} where the graph has ${graphql.name}, which only ${allowed} can carry`;
}

/** Whether the proto scalar is one of the floating-point types. */
export function isFloatScalar(proto: ScalarType): boolean {
  return FLOATS.includes(proto);
}
