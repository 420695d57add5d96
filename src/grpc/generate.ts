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
import { unnumberableName } from './generator-names.js';
import { DEFAULT_PACKAGE, protoPackageProblem, serviceNameFor } from './package-name.js';
import { loadProto } from './proto-root.js';

/** Options of `generateService`. */
export interface GenerateServiceOptions {
  /** The subgraph's GraphQL schema (SDL text). */
  readonly sdl: string;
  /** Proto package (`protoPackageProblem` says which are accepted). Default: `service.v1`. */
  readonly packageName?: string;
  /** The proto service's name, already in its final form (`serviceNameFromArgument`). Default: named after the package (`serviceNameFor`). */
  readonly serviceName?: string;
  /** Written as `option go_package = "...";`, as wgc's `--go-package` writes it. Default: none. */
  readonly goPackage?: string;
  /** The previous `service.proto.lock.json`, parsed; keeps field numbers stable. Default: none (a fresh lock). */
  readonly lock?: unknown;
  /** Names the schema in error messages. Default: `schema`. */
  readonly origin?: string;
  /** Names the lock in error messages. Default: `service.proto.lock.json`. */
  readonly lockOrigin?: string;
}

/** The three generated files, as text, plus what they were made with. */
export interface GeneratedService {
  /** The proto service's name (`mapping.json`'s `service`). */
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

/** The lock file's shape (protographic's `ProtoLock`), checked before the generator trusts it. */
const numbered = z.strictObject({ fields: z.record(z.string(), z.int().positive()), reservedNumbers: z.array(z.int().positive()).optional() });
const protoLockSchema = z.looseObject({
  version: z.string(),
  messages: z.record(z.string(), numbered),
  enums: z.record(z.string(), numbered),
});

/** Checks a parsed lock file; `undefined` for none (`null` counts as none, as wgc reads it). */
export function readLock(lock: unknown, origin: string): ProtoLock | undefined {
  if (lock === undefined || lock === null) return undefined;
  const result = protoLockSchema.safeParse(lock);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw failed(`${origin}: not a proto lock file: ${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}`);
}

/** Why a `--go-package` value cannot be written into a proto string, or `undefined` when it can. */
export function goPackageProblem(goPackage: string | undefined): string | undefined {
  if (goPackage === undefined) return undefined;
  if (goPackage === '' || /["\\\s]/.test(goPackage)) return `go package "${goPackage}" must be a non-empty Go import path without quotes, backslashes or spaces`;
  return undefined;
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
  serviceName = serviceNameFor(packageName),
  goPackage,
  lock,
  origin = 'schema',
  lockOrigin = 'service.proto.lock.json',
}: GenerateServiceOptions): Promise<GeneratedService> {
  checkNames(packageName, goPackage);
  const lockData = readLock(lock, lockOrigin);
  const warnings = await checkSchema(sdl, origin);
  const unnumberable = unnumberableName(sdl);
  if (unnumberable) {
    throw failed(
      `${origin}: cannot generate a gRPC service: ${unnumberable}: the generator (@wundergraph/protographic, which wgc uses too) cannot number a name every JavaScript object has, and would write a service.proto that does not load; rename it`,
    );
  }
  // Loaded here: the generator pulls in Cosmo's composition library, which only generation needs.
  const { compileGraphQLToMapping, compileGraphQLToProto } = await import('@wundergraph/protographic');
  const protoOptions = goPackage === undefined ? [] : [{ name: 'go_package', constant: `"${goPackage}"` }];
  let proto: string;
  let mappingText: string;
  let lockText: string;
  try {
    const mapping = compileGraphQLToMapping(sdl, serviceName);
    const compiled = compileGraphQLToProto(sdl, { serviceName, packageName, lockData, protoOptions });
    proto = compiled.proto;
    mappingText = JSON.stringify(mapping, null, 2);
    lockText = JSON.stringify(compiled.lockData, null, 2);
  } catch (error) {
    throw failed(`${origin}: cannot generate a gRPC service: ${firstLine(error)}`, error);
  }
  if (!/^\s*rpc\s/m.test(proto)) {
    throw failed(`${origin}: the schema defines no Query or Mutation fields and no @key entities, so the service would have no RPCs`);
  }
  // What is written must load: a proto the router (or compose) refuses is better refused here, naming the schema.
  try {
    await loadProto(proto, 'the generated service.proto');
  } catch (error) {
    throw failed(`${origin}: cannot generate a gRPC service: ${firstLine(error)}`, error);
  }
  return { serviceName, packageName, proto, mappingText, mapping: parseGrpcMapping(JSON.parse(mappingText), 'mapping.json'), lockText, warnings };
}

/** Throws `GRPC_GENERATION_FAILED` for a package or go package that cannot be written into a proto. */
export function checkNames(packageName: string, goPackage: string | undefined): void {
  const problem = protoPackageProblem(packageName) ?? goPackageProblem(goPackage);
  if (problem) throw failed(problem);
}

function firstLine(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

/**
 * Validates the schema as wgc does before generating (both modes): returns
 * the warnings (nullable list items, which protobuf cannot carry, ...);
 * throws `GRPC_GENERATION_FAILED` for errors (syntax, unknown types).
 */
export async function checkSchema(sdl: string, origin: string): Promise<string[]> {
  const { validateGraphQLSDL } = await import('@wundergraph/protographic');
  let validation: ReturnType<typeof validateGraphQLSDL>;
  try {
    validation = validateGraphQLSDL(sdl);
  } catch (error) {
    throw failed(`${origin}: cannot generate a gRPC service: ${firstLine(error)}`, error);
  }
  if (validation.errors.length > 0) {
    const errors = validation.errors.map((error) => error.replace(/^\[Error\]\s*/, '')).join('; ');
    throw failed(`${origin}: cannot generate a gRPC service: ${errors}`);
  }
  return validation.warnings.map((warning) => warning.replace(/^\[Warning\]\s*/, ''));
}
