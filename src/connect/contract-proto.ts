/**
 * A contract's proto, loaded for serving: the text is parsed with
 * protobufjs and turned into @bufbuild/protobuf descriptors, which the
 * Connect, gRPC and gRPC-Web handlers of @connectrpc/connect-node and the
 * JSON and binary codecs of @bufbuild/protobuf work from. Parsing at run
 * time keeps the proto the one source: no descriptor set to build or keep
 * in step, and a regenerated proto is served as soon as it is read.
 */
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { create, createFileRegistry, type DescFile, type DescService, type MessageInitShape } from '@bufbuild/protobuf';
import * as wkt from '@bufbuild/protobuf/wkt';
import type { DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto, ServiceDescriptorProto } from '@bufbuild/protobuf/wkt';
import protobuf from 'protobufjs';
import { contractError } from './contract-operations.js';

/** A loaded contract proto. */
export interface ContractProto {
  /** The file, with every message, enum and the service. */
  readonly file: DescFile;
  /** The proto's one service. */
  readonly service: DescService;
  /**
   * GraphQL variable names the generator recorded with the
   * `(graphql_variable_name)` field option, where the snake_case field name
   * does not lead back to the variable (`user_id` for `$userID`), keyed by
   * `<message type name>.<field name>`.
   */
  readonly variableNames: ReadonlyMap<string, string>;
  /** Comments of messages and fields (the GraphQL descriptions), keyed by type name or `<type name>.<field name>`. */
  readonly comments: ReadonlyMap<string, string>;
}

/** Well-known files a contract may import, as @bufbuild/protobuf ships them. */
const WELL_KNOWN: Readonly<Record<string, DescFile>> = {
  'google/protobuf/wrappers.proto': wkt.file_google_protobuf_wrappers,
  'google/protobuf/descriptor.proto': wkt.file_google_protobuf_descriptor,
  'google/protobuf/empty.proto': wkt.file_google_protobuf_empty,
  'google/protobuf/timestamp.proto': wkt.file_google_protobuf_timestamp,
  'google/protobuf/duration.proto': wkt.file_google_protobuf_duration,
  'google/protobuf/struct.proto': wkt.file_google_protobuf_struct,
  'google/protobuf/any.proto': wkt.file_google_protobuf_any,
  'google/protobuf/field_mask.proto': wkt.file_google_protobuf_field_mask,
};

const SCALAR_TYPES: Readonly<Record<string, wkt.FieldDescriptorProto_Type>> = {
  double: wkt.FieldDescriptorProto_Type.DOUBLE,
  float: wkt.FieldDescriptorProto_Type.FLOAT,
  int64: wkt.FieldDescriptorProto_Type.INT64,
  uint64: wkt.FieldDescriptorProto_Type.UINT64,
  int32: wkt.FieldDescriptorProto_Type.INT32,
  fixed64: wkt.FieldDescriptorProto_Type.FIXED64,
  fixed32: wkt.FieldDescriptorProto_Type.FIXED32,
  bool: wkt.FieldDescriptorProto_Type.BOOL,
  string: wkt.FieldDescriptorProto_Type.STRING,
  bytes: wkt.FieldDescriptorProto_Type.BYTES,
  uint32: wkt.FieldDescriptorProto_Type.UINT32,
  sfixed32: wkt.FieldDescriptorProto_Type.SFIXED32,
  sfixed64: wkt.FieldDescriptorProto_Type.SFIXED64,
  sint32: wkt.FieldDescriptorProto_Type.SINT32,
  sint64: wkt.FieldDescriptorProto_Type.SINT64,
};

const VARIABLE_NAME_OPTION = '(graphql_variable_name)';

/** protobufjs's copy of descriptor.proto, so `extend google.protobuf.FieldOptions` resolves. */
function descriptorTypes(): protobuf.INamespace {
  const json = createRequire(import.meta.url)('protobufjs/google/protobuf/descriptor.json') as { nested: Record<string, protobuf.AnyNestedObject> };
  return json;
}

/** protoc's json_name: underscores dropped, the letter after one upper-cased. */
export function jsonNameOf(fieldName: string): string {
  let out = '';
  let upper = false;
  for (const char of fieldName) {
    if (char === '_') upper = true;
    else {
      out += upper ? char.toUpperCase() : char;
      upper = false;
    }
  }
  return out;
}

/** Side tables filled while converting. */
interface Collected {
  readonly variableNames: Map<string, string>;
  readonly comments: Map<string, string>;
}

/** `.pkg.Type` (protobufjs) -> `pkg.Type` (descriptor type names without the dot). */
function typeNameOf(reflection: protobuf.ReflectionObject): string {
  return reflection.fullName.replace(/^\./, '');
}

function fieldProto(field: protobuf.Field, owner: protobuf.Type, collected: Collected): FieldDescriptorProto {
  const resolved = field.resolve().resolvedType;
  const scalar = SCALAR_TYPES[field.type];
  const init: MessageInitShape<typeof wkt.FieldDescriptorProtoSchema> = {
    name: field.name,
    number: field.id,
    label: field.repeated ? wkt.FieldDescriptorProto_Label.REPEATED : wkt.FieldDescriptorProto_Label.OPTIONAL,
    jsonName: typeof field.options?.json_name === 'string' ? field.options.json_name : jsonNameOf(field.name),
  };
  if (scalar !== undefined) init.type = scalar;
  else if (resolved instanceof protobuf.Enum) init.type = wkt.FieldDescriptorProto_Type.ENUM;
  else if (resolved instanceof protobuf.Type) init.type = wkt.FieldDescriptorProto_Type.MESSAGE;
  else throw new Error(`field ${typeNameOf(owner)}.${field.name}: cannot resolve type "${field.type}"`);
  if (resolved) init.typeName = `.${typeNameOf(resolved)}`;
  if (field.partOf) init.oneofIndex = owner.oneofsArray.indexOf(field.partOf);
  if (field.options?.proto3_optional === true) init.proto3Optional = true;
  const variable = field.options?.[VARIABLE_NAME_OPTION];
  if (typeof variable === 'string') collected.variableNames.set(`${typeNameOf(owner)}.${field.name}`, variable);
  if (field.comment) collected.comments.set(`${typeNameOf(owner)}.${field.name}`, field.comment);
  return create(wkt.FieldDescriptorProtoSchema, init);
}

/** A map field becomes a repeated `<Name>Entry` message, as protoc writes it. */
function mapEntry(field: protobuf.MapField, owner: protobuf.Type, collected: Collected): { entry: DescriptorProto; field: FieldDescriptorProto } {
  const entryName = `${field.name.replace(/(^|_)([a-z])/g, (_m, _u: string, c: string) => c.toUpperCase())}Entry`;
  const value = new protobuf.Field('value', 2, field.type);
  const holder = new protobuf.Type(entryName).add(new protobuf.Field('key', 1, field.keyType)).add(value);
  owner.add(holder);
  try {
    holder.resolveAll();
    const entry = create(wkt.DescriptorProtoSchema, {
      name: entryName,
      field: holder.fieldsArray.map((f) => fieldProto(f, holder, collected)),
      options: { mapEntry: true },
    });
    const mapField = create(wkt.FieldDescriptorProtoSchema, {
      name: field.name,
      number: field.id,
      label: wkt.FieldDescriptorProto_Label.REPEATED,
      type: wkt.FieldDescriptorProto_Type.MESSAGE,
      typeName: `.${typeNameOf(owner)}.${entryName}`,
      jsonName: jsonNameOf(field.name),
    });
    return { entry, field: mapField };
  } finally {
    owner.remove(holder);
  }
}

function reservedRanges(reserved: ReadonlyArray<number[] | string> | undefined): { ranges: Array<{ start: number; end: number }>; names: string[] } {
  const ranges: Array<{ start: number; end: number }> = [];
  const names: string[] = [];
  for (const item of reserved ?? []) {
    if (typeof item === 'string') names.push(item);
    else ranges.push({ start: item[0]!, end: item[1]! + 1 });
  }
  return { ranges, names };
}

function enumProto(type: protobuf.Enum, collected: Collected): EnumDescriptorProto {
  if (type.comment) collected.comments.set(typeNameOf(type), type.comment);
  const reserved = reservedRanges(type.reserved);
  return create(wkt.EnumDescriptorProtoSchema, {
    name: type.name,
    value: Object.entries(type.values).map(([name, number]) => ({ name, number })),
    // Enum reserved ranges are inclusive at both ends, unlike message ranges.
    reservedRange: reserved.ranges.map((range) => ({ start: range.start, end: range.end - 1 })),
    reservedName: reserved.names,
  });
}

function messageProto(type: protobuf.Type, collected: Collected): DescriptorProto {
  if (type.comment) collected.comments.set(typeNameOf(type), type.comment);
  const fields: FieldDescriptorProto[] = [];
  const nested: DescriptorProto[] = [];
  for (const field of type.fieldsArray) {
    if (field instanceof protobuf.MapField) {
      const map = mapEntry(field, type, collected);
      nested.push(map.entry);
      fields.push(map.field);
    } else {
      fields.push(fieldProto(field, type, collected));
    }
  }
  const reserved = reservedRanges(type.reserved);
  return create(wkt.DescriptorProtoSchema, {
    name: type.name,
    field: fields,
    nestedType: [...nested, ...(type.nestedArray.filter((n) => n instanceof protobuf.Type) as protobuf.Type[]).map((t) => messageProto(t, collected))],
    enumType: (type.nestedArray.filter((n) => n instanceof protobuf.Enum) as protobuf.Enum[]).map((e) => enumProto(e, collected)),
    oneofDecl: type.oneofsArray.map((oneof) => ({ name: oneof.name })),
    reservedRange: reserved.ranges,
    reservedName: reserved.names,
  });
}

function idempotencyOf(method: protobuf.Method): wkt.MethodOptions_IdempotencyLevel | undefined {
  const level = method.options?.idempotency_level;
  if (level === 'NO_SIDE_EFFECTS') return wkt.MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS;
  if (level === 'IDEMPOTENT') return wkt.MethodOptions_IdempotencyLevel.IDEMPOTENT;
  return undefined;
}

function serviceProto(service: protobuf.Service): ServiceDescriptorProto {
  return create(wkt.ServiceDescriptorProtoSchema, {
    name: service.name,
    method: service.methodsArray.map((method) => {
      method.resolve();
      const idempotencyLevel = idempotencyOf(method);
      return {
        name: method.name,
        inputType: `.${typeNameOf(method.resolvedRequestType!)}`,
        outputType: `.${typeNameOf(method.resolvedResponseType!)}`,
        clientStreaming: method.requestStream === true,
        serverStreaming: method.responseStream === true,
        ...(idempotencyLevel === undefined ? {} : { options: { idempotencyLevel } }),
      };
    }),
  });
}

/**
 * Parses a contract's proto text. Throws `CONNECT_CONTRACT_INVALID` naming
 * `origin` for a syntax error, a type that does not resolve, an import
 * other than the well-known types, or a file that does not declare exactly
 * one service.
 */
export function loadContractProto(text: string, origin: string): ContractProto {
  const root = new protobuf.Root();
  const collected: Collected = { variableNames: new Map(), comments: new Map() };
  let fileProto: FileDescriptorProto;
  let serviceName: string;
  try {
    const parsed = protobuf.parse(text, root, { keepCase: true, alternateCommentMode: true });
    const syntax = /^\s*syntax\s*=\s*"([^"]+)"/m.exec(text)?.[1];
    if (syntax !== 'proto3') throw new Error(`syntax ${syntax === undefined ? 'is not declared' : `"${syntax}" is not supported`}; contracts are proto3 (syntax = "proto3";)`);
    const imports = [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])];
    for (const file of imports) {
      if (WELL_KNOWN[file] === undefined) throw new Error(`imports "${file}"; a contract may import only well-known types`);
    }
    root.addJSON(descriptorTypes().nested ?? {});
    for (const file of imports) {
      const bundled = protobuf.common.get(file);
      if (bundled?.nested) root.addJSON(bundled.nested);
    }
    root.resolveAll();
    const pkg = parsed.package ?? '';
    const namespace = pkg === '' ? root : root.lookup(pkg);
    if (!(namespace instanceof protobuf.Namespace)) throw new Error(`package "${pkg}" declares nothing`);
    const services = namespace.nestedArray.filter((n): n is protobuf.Service => n instanceof protobuf.Service);
    if (services.length !== 1) throw new Error(`declares ${services.length} services; a contract has exactly one`);
    serviceName = services[0]!.name;
    fileProto = create(wkt.FileDescriptorProtoSchema, {
      name: basename(origin),
      package: pkg,
      syntax: 'proto3',
      dependency: imports,
      messageType: namespace.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type).map((t) => messageProto(t, collected)),
      enumType: namespace.nestedArray.filter((n): n is protobuf.Enum => n instanceof protobuf.Enum).map((e) => enumProto(e, collected)),
      service: services.map(serviceProto),
    });
  } catch (error) {
    throw contractError(`${origin}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  let file: DescFile;
  try {
    const registry = createFileRegistry(fileProto, (name) => WELL_KNOWN[name]);
    const found = registry.getFile(fileProto.name);
    if (!found) throw new Error('the file is missing from its registry');
    file = found;
  } catch (error) {
    throw contractError(`${origin}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const service = file.services.find((s) => s.name === serviceName)!;
  return { file, service, variableNames: collected.variableNames, comments: collected.comments };
}
