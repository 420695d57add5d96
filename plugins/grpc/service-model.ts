/**
 * One gRPC subgraph, compiled once per loaded graph: its GraphQL schema, the
 * protobuf reflection of `service.proto`, and `mapping.json` turned into
 * lookups by GraphQL name (root field, entity type, field, enum value).
 */
import { buildASTSchema, parse, type GraphQLSchema } from 'graphql';
import type { Enum, Method, Service, Type } from 'protobufjs';
import { checkMessageFields, findService, loadProto, parseGrpcMapping, snakeCase, type EntityMapping, type GrpcMapping } from '../../src/grpc/index.js';
import type { SubgraphRecord } from '../../src/index.js';

/** The execution config record of a gRPC subgraph. */
export type GrpcSubgraphRecord = Extract<SubgraphRecord, { kind: 'grpc' }>;

/** An RPC with its resolved message types. */
export interface Rpc {
  /** Method name, e.g. `QueryGetProject`. */
  readonly name: string;
  /** Path on the wire: `/service.v1.ServiceService/QueryGetProject`. */
  readonly path: string;
  readonly request: Type;
  readonly response: Type;
}

/** A root field served by one RPC. */
export interface RootFieldRpc extends Rpc {
  /** The response message's field carrying the result (`get_project`). */
  readonly resultField: string;
}

/** A `@requires` field of an entity, computed by its own RPC. */
export interface RequiresRpc extends Rpc {
  /** `Require...Fields`: the required external fields, as the request carries them. */
  readonly fieldsType: Type;
  /** The result message's field carrying the value. */
  readonly resultField: string;
}

/** An entity lookup by one `@key` field set. */
export interface EntityLookup extends Rpc {
  /** GraphQL key field names, e.g. `['id']` or `['sku', 'region']`. */
  readonly keyFields: readonly string[];
  /** `Lookup...RequestKey`. */
  readonly keyType: Type;
  /** `@requires` fields by GraphQL field name. */
  readonly requires: ReadonlyMap<string, RequiresRpc>;
}

/** A field with arguments on a non-root type, resolved by its own batched RPC. */
export interface ResolverRpc extends Rpc {
  /** The GraphQL type the field belongs to. */
  readonly typeName: string;
  /** The GraphQL field name. */
  readonly fieldName: string;
  /** `Resolve...Context`: parent fields the service needs. */
  readonly contextType: Type;
  /** `Resolve...Args`, when the request has `field_args`. */
  readonly argsType: Type | undefined;
  /** The result message's field carrying the value. */
  readonly resultField: string;
}

/** A compiled gRPC subgraph. */
export interface ServiceModel {
  readonly subgraph: string;
  readonly schema: GraphQLSchema;
  readonly mapping: GrpcMapping;
  /** Root field RPCs by `Query.field` / `Mutation.field`. */
  readonly rootFields: ReadonlyMap<string, RootFieldRpc>;
  /** Entity lookups by type name, in mapping order. */
  readonly entities: ReadonlyMap<string, readonly EntityLookup[]>;
  /** Field resolvers by `Type.field`. */
  readonly resolvers: ReadonlyMap<string, ResolverRpc>;
  /** Proto field name of a GraphQL field (snake_case unless the mapping says otherwise). */
  protoField(typeName: string, fieldName: string): string;
  /** GraphQL field name of a proto field of a type's message. */
  graphqlField(typeName: string, protoName: string): string | undefined;
  /** Proto field name of a GraphQL argument. */
  protoArgument(typeName: string, fieldName: string, argumentName: string): string;
  /** Proto enum value of a GraphQL enum value. */
  protoEnumValue(enumType: Enum, graphqlEnum: string, value: string): number | undefined;
  /** GraphQL enum value of a proto enum number, or `undefined` (for example `_UNSPECIFIED`). */
  graphqlEnumValue(enumType: Enum, graphqlEnum: string, value: number): string | undefined;
}

function keyFieldsOf(mapping: EntityMapping): string[] {
  if (/[{}]/.test(mapping.key)) throw new Error(`entity ${mapping.typeName}: nested key "${mapping.key}" is not supported`);
  return mapping.key.split(/[\s,]+/).filter((field) => field !== '');
}

function messageField(type: Type, name: string, context: string): string {
  const field = type.fields[name] ?? type.fieldsArray[0];
  if (!field) throw new Error(`${context}: message ${type.name} has no fields`);
  return field.name;
}

/** Reads the mapping's entries into lookups; throws an `Error` naming what does not match the proto. */
function indexMapping(mapping: GrpcMapping, service: Service, servicePath: string) {
  const rpc = (name: string): Rpc => {
    const method: Method | undefined = service.methods[name];
    if (!method?.resolvedRequestType || !method.resolvedResponseType) {
      throw new Error(`service ${service.name} has no RPC ${name} named in mapping.json (regenerate both files)`);
    }
    if (method.requestStream || method.responseStream) throw new Error(`RPC ${name} streams; only unary RPCs are supported`);
    return { name, path: `${servicePath}/${name}`, request: method.resolvedRequestType, response: method.resolvedResponseType };
  };
  const names = new Map<string, Map<string, string>>();
  const args = new Map<string, Map<string, string>>();
  for (const { type, fieldMappings } of mapping.typeFieldMappings) {
    const fields = new Map<string, string>();
    for (const field of fieldMappings) {
      fields.set(field.original, field.mapped);
      if (field.argumentMappings.length > 0) args.set(`${type}.${field.original}`, new Map(field.argumentMappings.map((a) => [a.original, a.mapped])));
    }
    names.set(type, fields);
  }
  const rootFields = new Map<string, RootFieldRpc>();
  for (const operation of mapping.operationMappings) {
    const root = operation.type === 'OPERATION_TYPE_MUTATION' ? 'Mutation' : operation.type === 'OPERATION_TYPE_QUERY' ? 'Query' : undefined;
    if (!root) continue;
    const call = rpc(operation.mapped);
    const preferred = names.get(root)?.get(operation.original) ?? snakeCase(operation.original);
    rootFields.set(`${root}.${operation.original}`, { ...call, resultField: messageField(call.response, preferred, call.name) });
  }
  const entities = new Map<string, EntityLookup[]>();
  for (const entity of mapping.entityMappings) {
    const call = rpc(entity.rpc);
    const keyType = call.request.fields.keys?.resolvedType;
    if (!keyType || !('fieldsArray' in keyType)) throw new Error(`RPC ${entity.rpc}: its request has no "keys" message field`);
    const requires = new Map<string, RequiresRpc>();
    for (const required of entity.requiredFieldMappings) {
      const field = required.fieldMapping;
      if (!field) continue;
      const requireCall = rpc(required.rpc);
      const contextType = requireCall.request.fields.context?.resolvedType;
      const fieldsType = contextType && 'fields' in contextType ? (contextType as Type).fields.fields?.resolvedType : undefined;
      const resultType = requireCall.response.fields.result?.resolvedType;
      if (!fieldsType || !('fieldsArray' in fieldsType) || !resultType || !('fieldsArray' in resultType)) {
        throw new Error(`RPC ${required.rpc}: not shaped as a @requires RPC (context.fields and result)`);
      }
      requires.set(field.original, { ...requireCall, fieldsType, resultField: messageField(resultType, field.mapped, required.rpc) });
    }
    const list = entities.get(entity.typeName) ?? [];
    list.push({ ...call, keyFields: keyFieldsOf(entity), keyType: keyType as Type, requires });
    entities.set(entity.typeName, list);
  }
  const resolvers = new Map<string, ResolverRpc>();
  for (const resolve of mapping.resolveMappings) {
    const lookup = resolve.lookupMapping;
    const field = lookup?.fieldMapping;
    if (!lookup || !field) continue;
    const call = rpc(resolve.rpc);
    const contextType = call.request.fields.context?.resolvedType;
    const argsType = call.request.fields.field_args?.resolvedType;
    const resultType = call.response.fields.result?.resolvedType;
    if (!contextType || !('fieldsArray' in contextType) || !resultType || !('fieldsArray' in resultType)) {
      throw new Error(`RPC ${resolve.rpc}: not shaped as a field resolver RPC (context and result)`);
    }
    resolvers.set(`${lookup.type}.${field.original}`, {
      ...call,
      typeName: lookup.type,
      fieldName: field.original,
      contextType: contextType as Type,
      argsType: argsType && 'fieldsArray' in argsType ? (argsType as Type) : undefined,
      resultField: messageField(resultType as Type, field.mapped, resolve.rpc),
    });
  }
  return { names, args, rootFields, entities, resolvers };
}

/**
 * Compiles a gRPC subgraph record. Throws an `Error` (the transport turns it
 * into `SUBGRAPH_REQUEST_FAILED`) when the schema, proto or mapping cannot be
 * read or do not fit together.
 */
export async function compileServiceModel(record: GrpcSubgraphRecord): Promise<ServiceModel> {
  const origin = `subgraph "${record.name}"`;
  const mapping = parseGrpcMapping(record.mapping, `${origin} mapping`);
  const proto = await loadProto(record.proto, `${origin} proto`);
  const service = findService(proto, mapping.service);
  if (!service) throw new Error(`${origin}: the proto defines no service ${mapping.service}`);
  let schema: GraphQLSchema;
  try {
    // Federation directives (@key, @link, ...) are left undefined in a subgraph SDL; only the types matter here.
    schema = buildASTSchema(parse(record.sdl), { assumeValidSDL: true });
  } catch (error) {
    throw new Error(`${origin}: cannot read its schema: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const index = indexMapping(mapping, service, `/${proto.packageName ? `${proto.packageName}.` : ''}${service.name}`);
  const reverse = new Map<string, Map<string, string>>();
  const enumNames = new Map<string, Map<string, string>>(mapping.enumMappings.map((e) => [e.type, new Map(e.values.map((v) => [v.original, v.mapped]))]));
  const enumValues = new Map<string, Map<string, string>>(mapping.enumMappings.map((e) => [e.type, new Map(e.values.map((v) => [v.mapped, v.original]))]));
  const model: ServiceModel = {
    subgraph: record.name,
    schema,
    mapping,
    rootFields: index.rootFields,
    entities: index.entities,
    resolvers: index.resolvers,
    protoField: (typeName, fieldName) => index.names.get(typeName)?.get(fieldName) ?? snakeCase(fieldName),
    graphqlField(typeName, protoName) {
      let fields = reverse.get(typeName);
      if (!fields) {
        fields = new Map();
        const type = schema.getType(typeName);
        if (type && 'getFields' in type) for (const name of Object.keys(type.getFields())) fields.set(model.protoField(typeName, name), name);
        reverse.set(typeName, fields);
      }
      return fields.get(protoName);
    },
    protoArgument: (typeName, fieldName, argumentName) => index.args.get(`${typeName}.${fieldName}`)?.get(argumentName) ?? snakeCase(argumentName),
    protoEnumValue(enumType, graphqlEnum, value) {
      const name = enumNames.get(graphqlEnum)?.get(value) ?? `${snakeCase(graphqlEnum).toUpperCase()}_${value}`;
      return enumType.values[name];
    },
    graphqlEnumValue(enumType, graphqlEnum, value) {
      const byName = enumValues.get(graphqlEnum);
      const name = enumType.valuesById[value];
      const found = name === undefined ? undefined : byName?.get(name);
      if (found !== undefined || byName === undefined) return found;
      // With allow_alias, valuesById keeps one name per number: the mapping may use another.
      for (const [alias, number] of Object.entries(enumType.values)) {
        if (number === value && byName.has(alias)) return byName.get(alias);
      }
      return undefined;
    },
  };
  try {
    checkMessageFields({ schema, root: proto.root, packageName: proto.packageName, protoField: model.protoField });
  } catch (error) {
    throw new Error(`${origin}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return model;
}
