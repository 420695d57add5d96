/**
 * `mapping.json`: how a gRPC service implements a GraphQL schema (root fields
 * to RPCs, entity lookups, field names, enum values). The format is the proto3
 * JSON form of Cosmo's `GRPCMapping` message, as its generator writes it, so
 * a service generated for Cosmo Router works unchanged.
 */
import { z } from 'zod';

// proto3 JSON leaves out empty lists and empty strings: every field has a default.
const text = z.string().default('');
const list = <T extends z.ZodType>(item: T) => z.array(item).default([]);

const argumentMapping = z.looseObject({ original: text, mapped: text });
const fieldMapping = z.looseObject({ original: text, mapped: text, argumentMappings: list(argumentMapping) });

const grpcMappingSchema = z.looseObject({
  version: z.number().default(1),
  service: z.string().min(1, 'required: the name of the gRPC service'),
  operationMappings: list(
    z.looseObject({
      type: z.string().default('OPERATION_TYPE_UNSPECIFIED'),
      original: text,
      mapped: text,
      request: text,
      response: text,
    }),
  ),
  entityMappings: list(
    z.looseObject({
      typeName: text,
      kind: text,
      key: text,
      rpc: text,
      request: text,
      response: text,
      requiredFieldMappings: list(z.looseObject({ fieldMapping: fieldMapping.optional(), rpc: text, request: text, response: text })),
    }),
  ),
  typeFieldMappings: list(z.looseObject({ type: text, fieldMappings: list(fieldMapping) })),
  enumMappings: list(z.looseObject({ type: text, values: list(z.looseObject({ original: text, mapped: text })) })),
  resolveMappings: list(
    z.looseObject({
      type: z.string().default('LOOKUP_TYPE_UNSPECIFIED'),
      lookupMapping: z.looseObject({ type: text, fieldMapping: fieldMapping.optional() }).optional(),
      rpc: text,
      request: text,
      response: text,
    }),
  ),
});

/** A parsed `mapping.json`, every list present (empty when the file leaves it out). */
export type GrpcMapping = z.output<typeof grpcMappingSchema>;
/** One root field -> RPC entry (`operationMappings[]`). */
export type OperationMapping = GrpcMapping['operationMappings'][number];
/** One entity lookup RPC (`entityMappings[]`), keyed by one `@key` field set. */
export type EntityMapping = GrpcMapping['entityMappings'][number];
/** One `@requires` field's RPC of an entity (`entityMappings[].requiredFieldMappings[]`). */
export type RequiredFieldMapping = EntityMapping['requiredFieldMappings'][number];
/** One field resolver RPC (`resolveMappings[]`): a field with arguments on a non-root type. */
export type ResolveMapping = GrpcMapping['resolveMappings'][number];
/** GraphQL field name -> proto field name, with its arguments. */
export type FieldMapping = z.output<typeof fieldMapping>;

/**
 * Validates a parsed `mapping.json`. Throws an `Error` naming `origin` and
 * the first wrong key path; unknown keys are kept (newer generators add some).
 */
export function parseGrpcMapping(value: unknown, origin: string): GrpcMapping {
  const result = grpcMappingSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const at = issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
  throw new Error(`${origin}: not a gRPC mapping: ${at}${issue.message}`);
}
