/**
 * Checks, when a gRPC subgraph loads, that the message of every object type
 * has a field for each GraphQL field the generator puts into it. A field
 * missing from a hand-edited or stale proto would otherwise read as null on
 * every answer, with no error anywhere.
 */
import { isObjectType, type GraphQLField, type GraphQLSchema } from 'graphql';
import type { Root, Type } from 'protobufjs';

/** Directives whose fields the generator leaves out of the type's message (served by other RPCs, or by other subgraphs). */
const NOT_IN_MESSAGE = new Set(['external', 'requires', 'connect__fieldResolver']);

/** What the check needs of the compiled subgraph. */
export interface MessageFieldsContext {
  readonly schema: GraphQLSchema;
  readonly root: Root;
  /** The proto package, empty for none. */
  readonly packageName: string;
  /** Proto field name of a GraphQL field (mapping.json, else snake_case). */
  protoField(typeName: string, fieldName: string): string;
}

/**
 * Throws an `Error` naming the type, the field and the message when a
 * message named after an object type (as the generator names them) lacks a
 * field the generator writes for it.
 */
export function checkMessageFields({ schema, root, packageName, protoField }: MessageFieldsContext): void {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || roots.has(type) || type.name.startsWith('_')) continue;
    const found = root.lookup(packageName ? `${packageName}.${type.name}` : type.name);
    const message = found && 'fieldsArray' in found ? (found as Type) : undefined;
    if (!message) continue;
    for (const field of Object.values(type.getFields())) {
      if (!inMessage(field)) continue;
      const name = protoField(type.name, field.name);
      if (!message.fields[name]) {
        throw new Error(`message ${message.name} has no field ${name} for ${type.name}.${field.name} (regenerate service.proto and mapping.json from the schema, and recompose)`);
      }
    }
  }
}

/** Whether the generator writes `field` into its type's message: no arguments (those have resolver RPCs) and none of NOT_IN_MESSAGE. */
function inMessage(field: GraphQLField<unknown, unknown>): boolean {
  if (field.args.length > 0) return false;
  return !field.astNode?.directives?.some((directive) => NOT_IN_MESSAGE.has(directive.name.value));
}
