/**
 * Schema-first generation: a subgraph's GraphQL schema -> `service.proto`,
 * `mapping.json` and `service.proto.lock.json`, with Cosmo's generator
 * (@wundergraph/protographic) called exactly as `wgc grpc-service generate`
 * calls it, so both tools write the same files for the same schema.
 */
import type { ProtoLock } from '@wundergraph/protographic';
import { z } from 'zod';
import { RouterError } from '../kernel/errors.js';
import { parseGrpcMapping, type GrpcMapping } from './mapping.js';
import { DEFAULT_PACKAGE, packageNameProblem, serviceNameFor } from './package-name.js';

/** Options of `generateService`. */
export interface GenerateServiceOptions {
  /** The subgraph's GraphQL schema (SDL text). */
  readonly sdl: string;
  /** Proto package, with a version segment. Default: `service.v1`. */
  readonly packageName?: string;
  /** The previous `service.proto.lock.json`, parsed; keeps field numbers stable. Default: none (a fresh lock). */
  readonly lock?: unknown;
  /** Names the schema in error messages. Default: `schema`. */
  readonly origin?: string;
  /** Names the lock in error messages. Default: `service.proto.lock.json`. */
  readonly lockOrigin?: string;
}

/** The three generated files, as text, plus what they were made with. */
export interface GeneratedService {
  /** `ServiceService` for `service.v1`: see `serviceNameFor`. */
  readonly serviceName: string;
  readonly packageName: string;
  /** `service.proto` text. */
  readonly proto: string;
  /** `mapping.json` text (2-space JSON, as wgc writes it). */
  readonly mappingText: string;
  /** `mapping.json`, parsed. */
  readonly mapping: GrpcMapping;
  /** `service.proto.lock.json` text. */
  readonly lockText: string;
  /** The generator's warnings (for example nullable list items, which protobuf cannot carry). */
  readonly warnings: readonly string[];
}

const numbered = z.strictObject({ fields: z.record(z.string(), z.int().positive()), reservedNumbers: z.array(z.int().positive()).optional() });
const protoLockSchema = z.looseObject({
  version: z.string(),
  messages: z.record(z.string(), numbered),
  enums: z.record(z.string(), numbered),
});

/** Checks a parsed lock file; `undefined` for none (`null` counts as none, as wgc reads it). */
function readLock(lock: unknown, origin: string): ProtoLock | undefined {
  if (lock === undefined || lock === null) return undefined;
  const result = protoLockSchema.safeParse(lock);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw failed(`${origin}: not a proto lock file: ${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}`);
}

function failed(message: string, cause?: unknown): RouterError {
  return new RouterError('GRPC_GENERATION_FAILED', message, { cause });
}

/**
 * Generates proto, mapping and lock from a GraphQL schema. Throws
 * `GRPC_GENERATION_FAILED` for a bad package name or a schema the
 * generator refuses (syntax errors, unknown types, ...).
 */
export async function generateService({
  sdl,
  packageName = DEFAULT_PACKAGE,
  lock,
  origin = 'schema',
  lockOrigin = 'service.proto.lock.json',
}: GenerateServiceOptions): Promise<GeneratedService> {
  const problem = packageNameProblem(packageName);
  if (problem) throw failed(`package ${problem}`);
  // Loaded here: the generator pulls in Cosmo's composition library, which only generation needs.
  const { compileGraphQLToMapping, compileGraphQLToProto, validateGraphQLSDL } = await import('@wundergraph/protographic');
  const lockData = readLock(lock, lockOrigin);
  const serviceName = serviceNameFor(packageName);
  let warnings: readonly string[];
  let proto: string;
  let mappingText: string;
  let lockText: string;
  try {
    const validation = validateGraphQLSDL(sdl);
    if (validation.errors.length > 0) throw new Error(validation.errors.join('; '));
    warnings = validation.warnings.map((warning) => warning.replace(/^\[Warning\]\s*/, ''));
    const mapping = compileGraphQLToMapping(sdl, serviceName);
    const compiled = compileGraphQLToProto(sdl, { serviceName, packageName, lockData });
    proto = compiled.proto;
    mappingText = JSON.stringify(mapping, null, 2);
    lockText = JSON.stringify(compiled.lockData, null, 2);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw failed(`${origin}: cannot generate a gRPC service: ${reason}`, error);
  }
  if (!/^\s*rpc\s/m.test(proto)) {
    throw failed(`${origin}: the schema defines no Query or Mutation fields and no @key entities, so the service would have no RPCs`);
  }
  return { serviceName, packageName, proto, mappingText, mapping: parseGrpcMapping(JSON.parse(mappingText), 'mapping.json'), lockText, warnings };
}
