/**
 * Checks that the message of every object type of a gRPC subgraph has a
 * field for each GraphQL field the generator puts into it. A field missing
 * from a hand-edited or stale proto would otherwise read as null on every
 * answer, with no error anywhere. The grpc plugin runs it when the router
 * loads the graph, and `switchyard compose` when it reads the subgraph, so
 * compose writes no graph the router would refuse at start.
 */
import { buildASTSchema, isObjectType, parse, type GraphQLField, type GraphQLSchema } from 'graphql';
import type { Root, Type } from 'protobufjs';
import type { GrpcMapping } from './mapping.js';

/** Directives whose fields the generator leaves out of the type's message (served by other RPCs, or by other subgraphs). */
const NOT_IN_MESSAGE = new Set(['external', 'requires', 'connect__fieldResolver']);

/** What the check needs of a gRPC subgraph. */
export interface MessageFieldsContext {
  readonly schema: GraphQLSchema;
  readonly root: Root;
  /** The proto package, empty for none. */
  readonly packageName: string;
  /** Proto field name of a GraphQL field (mapping.json, else snake_case). */
  protoField(typeName: string, fieldName: string): string;
}

/** One GraphQL field its type's message lacks. */
export interface MissingMessageField {
  /** The GraphQL object type, e.g. `Product`. */
  readonly typeName: string;
  /** The GraphQL field, e.g. `category`. */
  readonly fieldName: string;
  /** The proto message, e.g. `Product`. */
  readonly message: string;
  /** The proto field name the message should have, e.g. `category`. */
  readonly protoField: string;
}

/**
 * Every GraphQL field whose message (named after its object type, as the
 * generator names them) lacks the field the generator writes for it, in
 * schema order. Types without such a message are not checked.
 */
export function missingMessageFields({ schema, root, packageName, protoField }: MessageFieldsContext): MissingMessageField[] {
  const missing: MissingMessageField[] = [];
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || roots.has(type) || type.name.startsWith('_')) continue;
    const found = root.lookup(packageName ? `${packageName}.${type.name}` : type.name);
    const message = found && 'fieldsArray' in found ? (found as Type) : undefined;
    if (!message) continue;
    for (const field of Object.values(type.getFields())) {
      if (!inMessage(field)) continue;
      const name = protoField(type.name, field.name);
      if (!message.fields[name]) missing.push({ typeName: type.name, fieldName: field.name, message: message.name, protoField: name });
    }
  }
  return missing;
}

/** Whether the generator writes `field` into its type's message: no arguments (those have resolver RPCs) and none of NOT_IN_MESSAGE. */
function inMessage(field: GraphQLField<unknown, unknown>): boolean {
  if (field.args.length > 0) return false;
  return !field.astNode?.directives?.some((directive) => NOT_IN_MESSAGE.has(directive.name.value));
}

/** What the router and compose say of a missing field. */
export function formatMissingMessageField({ typeName, fieldName, message, protoField }: MissingMessageField): string {
  return `message ${message} has no field ${protoField} for ${typeName}.${fieldName} (regenerate service.proto and mapping.json from the schema, and recompose)`;
}

/** Throws an `Error` with `formatMissingMessageField` of the first missing field, if any. */
export function checkMessageFields(context: MessageFieldsContext): void {
  const [first] = missingMessageFields(context);
  if (first) throw new Error(formatMissingMessageField(first));
}

/** `createdAt` -> `created_at`, as the generator names proto fields. */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** Proto field name of a GraphQL field as the router reads it: `typeFieldMappings` of mapping.json, else snake_case. */
export function protoFieldNames(mapping: GrpcMapping): (typeName: string, fieldName: string) => string {
  const names = new Map<string, Map<string, string>>();
  // As the grpc plugin reads them: a type listed twice takes its last entry.
  for (const { type, fieldMappings } of mapping.typeFieldMappings) names.set(type, new Map(fieldMappings.map((field) => [field.original, field.mapped])));
  return (typeName, fieldName) => names.get(typeName)?.get(fieldName) ?? snakeCase(fieldName);
}

/**
 * The subgraph's schema as the router builds it for a gRPC subgraph
 * (federation directives left undefined), or `undefined` when it cannot be
 * built: composition then reports what is wrong with the SDL.
 */
export function grpcSubgraphSchema(sdl: string): GraphQLSchema | undefined {
  try {
    return buildASTSchema(parse(sdl), { assumeValidSDL: true });
  } catch {
    return undefined;
  }
}
