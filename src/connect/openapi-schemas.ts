/**
 * JSON Schemas (OpenAPI 3.1 components) for the messages and enums of a
 * contract, in their proto3 JSON form: lowerCamelCase field names, enum
 * values by name, wrapper types as plain values or null, 64-bit integers as
 * numbers or strings.
 */
import { ScalarType, type DescEnum, type DescField, type DescMessage } from '@bufbuild/protobuf';

/** A JSON Schema object, as OpenAPI 3.1 embeds it. */
export type JsonSchema = Record<string, unknown>;

/** Comments of messages and fields, as `ContractProto.comments` keeps them. */
export type Comments = ReadonlyMap<string, string>;

const WRAPPERS: Readonly<Record<string, JsonSchema>> = {
  'google.protobuf.DoubleValue': { type: ['number', 'null'], format: 'double' },
  'google.protobuf.FloatValue': { type: ['number', 'null'], format: 'float' },
  'google.protobuf.Int64Value': { type: ['integer', 'string', 'null'], format: 'int64' },
  'google.protobuf.UInt64Value': { type: ['integer', 'string', 'null'], format: 'uint64' },
  'google.protobuf.Int32Value': { type: ['integer', 'null'], format: 'int32' },
  'google.protobuf.UInt32Value': { type: ['integer', 'null'], format: 'uint32' },
  'google.protobuf.BoolValue': { type: ['boolean', 'null'] },
  'google.protobuf.StringValue': { type: ['string', 'null'] },
  'google.protobuf.BytesValue': { type: ['string', 'null'], contentEncoding: 'base64' },
};

/** Component name of a message or enum: its full proto name. */
export function componentName(desc: DescMessage | DescEnum): string {
  return desc.typeName;
}

/** A `$ref` to a component schema. */
export function schemaRef(desc: DescMessage | DescEnum): JsonSchema {
  return { $ref: `#/components/schemas/${componentName(desc)}` };
}

function scalarSchema(scalar: ScalarType): JsonSchema {
  switch (scalar) {
    case ScalarType.STRING:
      return { type: 'string' };
    case ScalarType.BOOL:
      return { type: 'boolean' };
    case ScalarType.BYTES:
      return { type: 'string', contentEncoding: 'base64' };
    case ScalarType.DOUBLE:
      return { type: 'number', format: 'double' };
    case ScalarType.FLOAT:
      return { type: 'number', format: 'float' };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: 'integer', format: 'int32' };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: 'integer', format: 'uint32', minimum: 0 };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: ['integer', 'string'], format: 'uint64' };
    default:
      // int64, sint64, sfixed64: proto3 JSON writes them as strings and reads either form.
      return { type: ['integer', 'string'], format: 'int64' };
  }
}

/** The schema of one value of a field (one item, for lists). */
function valueSchema(field: DescField): JsonSchema {
  switch (field.fieldKind) {
    case 'scalar':
      return scalarSchema(field.scalar);
    case 'enum':
      return schemaRef(field.enum);
    case 'message':
      return WRAPPERS[field.message.typeName] ?? schemaRef(field.message);
    case 'list':
      if (field.listKind === 'scalar') return { type: 'array', items: scalarSchema(field.scalar) };
      if (field.listKind === 'enum') return { type: 'array', items: schemaRef(field.enum) };
      return { type: 'array', items: WRAPPERS[field.message.typeName] ?? schemaRef(field.message) };
    case 'map': {
      const value =
        field.mapKind === 'scalar' ? scalarSchema(field.scalar) : field.mapKind === 'enum' ? schemaRef(field.enum) : (WRAPPERS[field.message.typeName] ?? schemaRef(field.message));
      return { type: 'object', additionalProperties: value };
    }
  }
}

function described(schema: JsonSchema, comment: string | undefined): JsonSchema {
  return comment ? { ...schema, description: comment } : schema;
}

function enumSchema(desc: DescEnum): JsonSchema {
  return { title: desc.name, type: 'string', enum: desc.values.map((value) => value.name) };
}

function messageSchema(desc: DescMessage, comments: Comments): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const field of desc.fields) {
    const schema = valueSchema(field);
    // A `$ref` takes no siblings in older tools; wrap it when a description goes beside it.
    const comment = comments.get(`${desc.typeName}.${field.name}`);
    properties[field.jsonName] = comment && '$ref' in schema ? { allOf: [schema], description: comment } : described(schema, comment);
  }
  return described({ title: desc.name, type: 'object', properties, additionalProperties: false }, comments.get(desc.typeName));
}

/**
 * Schemas of the messages given and of every message and enum they reach,
 * keyed by component name. Wrapper types are inlined, not listed.
 */
export function messageComponents(roots: readonly DescMessage[], comments: Comments): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  const visit = (desc: DescMessage | DescEnum): void => {
    const name = componentName(desc);
    if (name in schemas || WRAPPERS[name] !== undefined) return;
    if (desc.kind === 'enum') {
      schemas[name] = enumSchema(desc);
      return;
    }
    schemas[name] = messageSchema(desc, comments);
    for (const field of desc.fields) {
      if (field.message) visit(field.message);
      if (field.enum) visit(field.enum);
    }
  };
  for (const root of roots) visit(root);
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}
