/**
 * One subgraph fetch over gRPC: each root field becomes its RPC (mutations one
 * after the other, queries together); each `_entities` field becomes one
 * lookup RPC per entity type and key (plus one per selected `@requires`
 * field); fields with arguments on other types are resolved afterwards in
 * batches, one RPC per field selection. The answer is GraphQL-shaped, with
 * a GraphQL error at every field a failed RPC would have filled.
 */
import { BREAK, GraphQLObjectType, Kind, getArgumentValues, isObjectType, valueFromASTUntyped, visit, type FieldNode, type GraphQLField, type SelectionSetNode } from 'graphql';
import type { Type } from 'protobufjs';
import { RouterError, setOwn, type GraphQLErrorJSON, type SubgraphRequest, type SubgraphResponse } from '../../src/index.js';
import { collectFields, type CollectContext } from './collect-fields.js';
import type { FetchDocument } from './fetch-document.js';
import { ResponseBuilder, at, pathOf, type MessageRange, type ResolverJob, type ResponsePath } from './from-proto.js';
import type { GrpcChannels } from './grpc-channels.js';
import { fetchError, type ErrorContext } from './grpc-errors.js';
import { encodeMessage } from './message-codec.js';
import { ProtoShapeError, isMessageType, slotOf } from './proto-slot.js';
import type { EntityLookup, ResolverRpc, Rpc, ServiceModel } from './service-model.js';
import { messageToProto, toProto } from './to-proto.js';

/** What a fetch runs with. */
export interface GrpcFetchOptions {
  readonly model: ServiceModel;
  /** Told why the service could not be reached (ErrorContext). */
  readonly unreachable?: (subgraph: string, details: string) => void;
  readonly channels: GrpcChannels;
  /** gRPC target of the subgraph. */
  readonly target: string;
  readonly document: FetchDocument;
  readonly request: SubgraphRequest;
  readonly signal: AbortSignal;
  /** `traffic_shaping` request timeout: one deadline for every RPC of the fetch. */
  readonly timeoutMs: number;
}

/** Runs one fetch; see the module comment. */
export async function runGrpcFetch(options: GrpcFetchOptions): Promise<SubgraphResponse> {
  return new GrpcFetch(options).run();
}

class GrpcFetch {
  private readonly errors: GraphQLErrorJSON[] = [];
  private readonly collect: CollectContext;
  private readonly builder: ResponseBuilder;
  private readonly deadline: number;
  private readonly errorContext: ErrorContext;

  constructor(private readonly options: GrpcFetchOptions) {
    const { model, document, request } = options;
    this.collect = { schema: model.schema, fragments: document.fragments, variables: request.variables };
    this.builder = new ResponseBuilder(model, this.collect);
    this.deadline = Date.now() + options.timeoutMs;
    this.errorContext = { subgraph: model.subgraph, timeoutMs: options.timeoutMs, unreachable: options.unreachable };
  }

  async run(): Promise<SubgraphResponse> {
    const { operation } = this.options.document;
    if (operation.operation === 'subscription') {
      throw new RouterError('SUBGRAPH_REQUEST_FAILED', `Subgraph "${this.options.model.subgraph}" is a gRPC service, which serves no subscriptions.`);
    }
    const schema = this.options.model.schema;
    const rootType = (operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType()) ?? emptyRoot(operation.operation);
    const data: Record<string, unknown> = {};
    const fields = [...collectFields(this.collect, rootType, [operation.selectionSet])];
    const runField = async ([key, nodes]: [string, FieldNode[]]): Promise<void> => {
      setOwn(data, key, await this.rootField(rootType, key, nodes));
    };
    if (operation.operation === 'mutation') {
      for (const field of fields) await runField(field);
    } else {
      await Promise.all(fields.map(runField));
    }
    await this.runResolvers();
    return this.errors.length > 0 ? { data, errors: this.errors } : { data };
  }

  private async rootField(rootType: GraphQLObjectType, key: string, nodes: FieldNode[]): Promise<unknown> {
    const node = nodes[0]!;
    const name = node.name.value;
    if (name === '__typename') return rootType.name;
    if (name === '_entities') return this.entities(node, key);
    try {
      const field = rootType.getFields()[name];
      const rpc = this.options.model.rootFields.get(`${rootType.name}.${name}`);
      if (!field || !rpc) throw new Error(`mapping.json has no RPC for ${rootType.name}.${name} (regenerate the service and recompose)`);
      const response = await this.send(rpc, this.rootRequest(rootType.name, field, node, rpc));
      return this.builder.fieldValue(response, rpc.response, rpc.response.fields[rpc.resultField]!, field.type, nodes, at(undefined, key));
    } catch (error) {
      this.errors.push(fetchError(error, [key], this.errorContext));
      return null;
    }
  }

  /** `_entities(representations:)`: one lookup per entity type and key, results in representation order. */
  private async entities(node: FieldNode, key: string): Promise<unknown[] | null> {
    const representations = this.representationsOf(node);
    if (!representations) {
      this.errors.push(fetchError(new Error('_entities needs a list of representations'), [key], this.errorContext));
      return null;
    }
    const results: unknown[] = representations.map(() => null);
    const groups = new Map<EntityLookup, { type: GraphQLObjectType; indexes: number[] }>();
    representations.forEach((representation, index) => {
      const typename = isRecord(representation) ? representation.__typename : undefined;
      const type = typeof typename === 'string' ? this.options.model.schema.getType(typename) : undefined;
      const lookup =
        isObjectType(type) && isRecord(representation)
          ? this.options.model.entities.get(type.name)?.find((candidate) => candidate.keyFields.every((field) => Object.hasOwn(representation, field)))
          : undefined;
      if (!lookup || !isObjectType(type)) {
        const reason = `no entity lookup RPC in mapping.json for ${typeof typename === 'string' ? typename : 'a representation without __typename'} with the key fields sent`;
        this.errors.push(fetchError(new Error(reason), [key, index], this.errorContext));
        return;
      }
      const group = groups.get(lookup) ?? { type, indexes: [] };
      group.indexes.push(index);
      groups.set(lookup, group);
    });
    const selection = node.selectionSet;
    if (!selection) return results;
    await Promise.all(
      [...groups].map(([lookup, { type, indexes }]) =>
        this.entityGroup(
          lookup,
          type,
          indexes.map((i) => representations[i] as Record<string, unknown>),
          indexes,
          selection,
          key,
          results,
        ),
      ),
    );
    return results;
  }

  private async entityGroup(
    lookup: EntityLookup,
    type: GraphQLObjectType,
    representations: Record<string, unknown>[],
    indexes: number[],
    selection: SelectionSetNode,
    key: string,
    results: unknown[],
  ): Promise<void> {
    const model = this.options.model;
    const entityType = lookup.response.fields.result?.resolvedType ?? undefined;
    const selected = [...collectFields(this.collect, type, [selection])];
    const required = selected.filter(([, nodes]) => lookup.requires.has(nodes[0]!.name.value));
    const needsLookup = selected.some(([, nodes]) => nodes[0]!.name.value !== '__typename' && !lookup.requires.has(nodes[0]!.name.value));
    let keys: Record<string, unknown>[];
    try {
      if (!isMessageType(entityType)) throw new ProtoShapeError(`${lookup.name} has no repeated "result" message field`);
      keys = representations.map((representation) => {
        const object: Record<string, unknown> = {};
        for (const field of lookup.keyType.fieldsArray) {
          const name = model.graphqlField(type.name, field.name) ?? field.name;
          const definition = type.getFields()[name];
          const value = definition ? toProto(model, representation[name], definition.type, slotOf(field)) : undefined;
          if (value !== undefined) object[field.name] = value;
        }
        return object;
      });
    } catch (error) {
      this.failedAt(
        error,
        indexes.map((index) => [key, index]),
      );
      return;
    }
    const requireCalls = required.map(([responseKey, nodes]) => this.requiredField(lookup, type, representations, keys, indexes, key, responseKey, nodes));
    if (needsLookup) {
      try {
        const response = await this.call(lookup, { keys });
        const list = this.resultRanges(response, lookup, representations.length);
        list.forEach((range, j) => {
          results[indexes[j]!] = this.builder.objectAt(response, range, entityType as Type, type, [selection], at(at(undefined, key), indexes[j]!));
        });
      } catch (error) {
        this.failedAt(
          error,
          indexes.map((index) => [key, index]),
        );
        await Promise.allSettled(requireCalls);
        return;
      }
    } else {
      // Only @requires fields (and __typename) are selected: nothing to look up.
      for (const index of indexes) results[index] = this.builder.objectAt(EMPTY, { start: 0, end: 0 }, entityType as Type, type, [selection], at(at(undefined, key), index));
    }
    for (const fill of await Promise.all(requireCalls)) fill?.(results);
  }

  /** Calls a `@requires` field's RPC; resolves with a function that writes its values into the entities. */
  private async requiredField(
    lookup: EntityLookup,
    type: GraphQLObjectType,
    representations: Record<string, unknown>[],
    keys: Record<string, unknown>[],
    indexes: number[],
    key: string,
    responseKey: string,
    nodes: FieldNode[],
  ): Promise<((results: unknown[]) => void) | undefined> {
    const name = nodes[0]!.name.value;
    const rpc = lookup.requires.get(name)!;
    const field = type.getFields()[name]!;
    try {
      const context = representations.map((representation, j) => ({
        key: keys[j],
        fields: messageToProto(this.options.model, type.name, type.getFields(), representation, rpc.fieldsType),
      }));
      const response = await this.call(rpc, { context });
      const list = this.resultRanges(response, rpc, representations.length);
      const resultType = rpc.response.fields.result!.resolvedType as Type;
      const resultField = resultType.fields[rpc.resultField]!;
      return (results) => {
        list.forEach((range, j) => {
          const entity = results[indexes[j]!];
          if (!isRecord(entity)) return;
          setOwn(entity, responseKey, this.builder.fieldValue(response, resultType, resultField, field.type, nodes, at(at(at(undefined, key), indexes[j]!), responseKey), range));
        });
      };
    } catch (error) {
      this.failedAt(
        error,
        indexes.map((index) => [key, index, responseKey]),
      );
      return undefined;
    }
  }

  /** Field resolvers, wave by wave (a resolved value may hold more of them): one RPC per field selection. */
  private async runResolvers(): Promise<void> {
    while (this.builder.jobs.length > 0) {
      const groups = new Map<ResolverRpc, Map<FieldNode, ResolverJob[]>>();
      for (const job of this.builder.jobs.splice(0)) {
        const byNode = groups.get(job.resolver) ?? new Map<FieldNode, ResolverJob[]>();
        const list = byNode.get(job.nodes[0]!) ?? [];
        list.push(job);
        byNode.set(job.nodes[0]!, list);
        groups.set(job.resolver, byNode);
      }
      await Promise.all([...groups.values()].flatMap((byNode) => [...byNode.values()].map((jobs) => this.resolveField(jobs))));
    }
  }

  private async resolveField(jobs: ResolverJob[]): Promise<void> {
    const { resolver, field, nodes } = jobs[0]!;
    try {
      const request: Record<string, unknown> = {
        context: jobs.map((job) => {
          const context: Record<string, unknown> = {};
          for (const contextField of resolver.contextType.fieldsArray) {
            const value = job.parent[contextField.name];
            if (value !== undefined && value !== null) context[contextField.name] = value;
          }
          return context;
        }),
      };
      if (resolver.argsType) request.field_args = this.argumentsToProto(resolver.typeName, field, nodes[0]!, resolver.argsType);
      const response = await this.call(resolver, request);
      const list = this.resultRanges(response, resolver, jobs.length);
      const resultType = resolver.response.fields.result!.resolvedType as Type;
      const resultField = resultType.fields[resolver.resultField]!;
      list.forEach((range, j) => {
        const job = jobs[j]!;
        job.target[job.key] = this.builder.fieldValue(response, resultType, resultField, field.type, nodes, job.path, range);
      });
    } catch (error) {
      this.failedAt(
        error,
        jobs.map((job) => pathOf(job.path)),
      );
    }
  }

  /** One RPC's failure, reported at every position it was to fill (each of those fields failed, not the first alone). */
  private failedAt(error: unknown, paths: ReadonlyArray<ResponsePath>): void {
    for (const path of paths) this.errors.push(fetchError(error, path, this.errorContext));
  }

  /** A field's arguments (literals, variables, defaults) as the fields of `message`, named by the mapping. */
  private argumentsToProto(typeName: string, field: GraphQLField<unknown, unknown>, node: FieldNode, message: Type): Record<string, unknown> {
    const model = this.options.model;
    const args = getArgumentValues(field, node, this.collect.variables);
    const object: Record<string, unknown> = {};
    for (const argument of field.args) {
      const protoName = model.protoArgument(typeName, field.name, argument.name);
      const protoField = message.fields[protoName];
      const value = protoField ? toProto(model, args[argument.name], argument.type, slotOf(protoField)) : undefined;
      if (value !== undefined) object[protoName] = value;
    }
    return object;
  }

  /**
   * The encoded request of a root field's RPC. Arguments written as literals
   * (no variables) encode the same for every request of the operation, so
   * their bytes are kept with the parsed field (fetch texts are parsed once).
   */
  private rootRequest(typeName: string, field: GraphQLField<unknown, unknown>, node: FieldNode, rpc: Rpc): Uint8Array {
    const model = this.options.model;
    const known = rootRequests.get(node);
    if (known !== VARIES && known?.model === model) return known.bytes;
    const bytes = encodeRequest(rpc, this.argumentsToProto(typeName, field, node, rpc.request));
    if (known !== VARIES) rootRequests.set(node, usesVariables(node) ? VARIES : { model, bytes });
    return bytes;
  }

  /** Sends one RPC; resolves with the response message's bytes (read by the response builder). */
  private call(rpc: Rpc, object: Record<string, unknown>): Promise<Buffer> {
    return this.send(rpc, encodeRequest(rpc, object));
  }

  private send(rpc: Rpc, bytes: Uint8Array): Promise<Buffer> {
    const { channels, target, request, signal } = this.options;
    return channels.call(target, rpc.path, bytes, { deadline: this.deadline, headers: request.headers, signal });
  }

  /** Where the items of a `repeated result` lie; there must be one per key, in order. */
  private resultRanges(response: Buffer, rpc: Rpc, expected: number): MessageRange[] {
    const field = rpc.response.fields.result;
    const ranges = field ? this.builder.messages(response, rpc.response, field) : [];
    if (ranges.length !== expected) {
      throw new ProtoShapeError(`${rpc.name} returned ${ranges.length} results for ${expected} requested; it must return one per key, in order`);
    }
    return ranges;
  }

  private representationsOf(node: FieldNode): unknown[] | undefined {
    const argument = node.arguments?.find((a) => a.name.value === 'representations');
    if (!argument) return this.options.request.representations ? [...this.options.request.representations] : undefined;
    const value = argument.value.kind === Kind.VARIABLE ? this.collect.variables[argument.value.name.value] : valueFromASTUntyped(argument.value, this.collect.variables);
    return Array.isArray(value) ? value : undefined;
  }
}

function encodeRequest(rpc: Rpc, object: Record<string, unknown>): Uint8Array {
  return encodeMessage(rpc.request, object);
}

/** A root field whose arguments use variables: its request is encoded for every fetch. */
const VARIES = Symbol('varies');

/**
 * What is known of a root field's request, by field node: its bytes when its
 * arguments are all literals (for the model they were encoded for), or
 * `VARIES`; so each node's arguments are looked through once.
 */
const rootRequests = new WeakMap<FieldNode, { readonly model: ServiceModel; readonly bytes: Uint8Array } | typeof VARIES>();

/** Whether a field's arguments refer to a variable anywhere (then every request may encode differently). */
function usesVariables(node: FieldNode): boolean {
  let found = false;
  for (const argument of node.arguments ?? []) {
    visit(argument.value, {
      Variable() {
        found = true;
        return BREAK;
      },
    });
    if (found) return true;
  }
  return false;
}

/** The message of an entity lookup that selects no looked-up field: every field absent. */
const EMPTY = Buffer.alloc(0);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const emptyRoots = new Map<string, GraphQLObjectType>();

/** A root type with no fields, for a service that defines none (entity lookups only). */
function emptyRoot(operation: string): GraphQLObjectType {
  const name = operation === 'mutation' ? 'Mutation' : 'Query';
  let type = emptyRoots.get(name);
  if (!type) emptyRoots.set(name, (type = new GraphQLObjectType({ name, fields: {} })));
  return type;
}
