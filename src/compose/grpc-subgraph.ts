/**
 * Reads a gRPC subgraph of the compose file: its schema, `service.proto` and
 * `mapping.json`, checking that they belong together so a stale generation
 * fails at compose time rather than on the first request, and a message
 * lacking a field of its GraphQL type fails here rather than when the router
 * loads the graph.
 */
import { readFile } from 'node:fs/promises';
import { Kind, parse } from 'graphql';
import { parseGrpcMapping, type GrpcMapping } from '../grpc/mapping.js';
import { findService, loadProto } from '../grpc/proto-root.js';
import type { GrpcSubgraph } from './compose-file.js';
import { formatMissingMessageField, grpcSubgraphSchema, missingMessageFields, protoFieldNames } from '../grpc/message-fields.js';

/** A gRPC subgraph's files, read and checked. */
export interface GrpcSubgraphFiles {
  /** The GraphQL schema (SDL). */
  readonly sdl: string;
  /** `service.proto` text. */
  readonly proto: string;
  /** `mapping.json`, as written (unknown keys kept). */
  readonly mapping: Record<string, unknown>;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const missing = error instanceof Error && 'code' in error && error.code === 'ENOENT';
    const hint = what === 'schema' ? '' : ' (run `switchyard grpc-service generate` first)';
    throw new Error(missing ? `${what} file not found: ${file}${hint}` : `cannot read ${file}: ${String(error)}`, { cause: error });
  }
}

function rpcsNamed(mapping: GrpcMapping): string[] {
  return [
    ...mapping.operationMappings.map((m) => m.mapped),
    ...mapping.entityMappings.flatMap((m) => [m.rpc, ...m.requiredFieldMappings.map((r) => r.rpc)]),
    ...mapping.resolveMappings.map((m) => m.rpc),
  ];
}

/** Root fields the schema defines on Query and Mutation (the generator makes RPCs for definitions, not extensions). */
function rootFields(sdl: string): string[] {
  const fields: string[] = [];
  for (const definition of parse(sdl).definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
    if (definition.name.value !== 'Query' && definition.name.value !== 'Mutation') continue;
    for (const field of definition.fields ?? []) fields.push(`${definition.name.value}.${field.name.value}`);
  }
  return fields;
}

/**
 * Reads and cross-checks the three files. Throws an `Error` whose message
 * names the file and what is wrong (the caller adds the subgraph name).
 */
export async function loadGrpcSubgraph(subgraph: GrpcSubgraph): Promise<GrpcSubgraphFiles> {
  // Read together, reported in a fixed order: the first missing file is the one to fix first.
  const reads = await Promise.allSettled([readText(subgraph.schemaFile, 'schema'), readText(subgraph.protoFile, 'proto'), readText(subgraph.mappingFile, 'mapping')]);
  for (const read of reads) if (read.status === 'rejected') throw read.reason;
  const [sdl, proto, mappingText] = reads.map((read) => (read as PromiseFulfilledResult<string>).value) as [string, string, string];
  let json: unknown;
  try {
    json = JSON.parse(mappingText);
  } catch (error) {
    throw new Error(`${subgraph.mappingFile}: not valid JSON`, { cause: error });
  }
  const mapping = parseGrpcMapping(json, subgraph.mappingFile);
  const loaded = await loadProto(proto, subgraph.protoFile);
  const service = findService(loaded, mapping.service);
  if (!service) {
    throw new Error(
      `${subgraph.mappingFile} names service "${mapping.service}", which ${subgraph.protoFile} does not define (regenerate both with \`switchyard grpc-service generate\`)`,
    );
  }
  const missing = rpcsNamed(mapping).filter((rpc) => !service.methods[rpc]);
  if (missing.length > 0) {
    throw new Error(`${subgraph.protoFile}: service ${mapping.service} has no RPC ${missing.join(', ')} named in ${subgraph.mappingFile} (regenerate both)`);
  }
  const mapped = new Set(mapping.operationMappings.map((m) => `${m.type === 'OPERATION_TYPE_MUTATION' ? 'Mutation' : 'Query'}.${m.original}`));
  const stale = rootFields(sdl).filter((field) => !mapped.has(field));
  if (stale.length > 0) {
    throw new Error(`${subgraph.mappingFile} is older than ${subgraph.schemaFile}: no RPC for ${stale.join(', ')} (run \`switchyard grpc-service generate\` again)`);
  }
  // The router refuses a message lacking a field of its GraphQL type when it loads the graph: refuse it here, before any output is written.
  const schema = grpcSubgraphSchema(sdl);
  const [missingField] = schema ? missingMessageFields({ schema, root: loaded.root, packageName: loaded.packageName, protoField: protoFieldNames(mapping) }) : [];
  if (missingField) throw new Error(`${subgraph.protoFile}: ${formatMissingMessageField(missingField)}`);
  return { sdl, proto, mapping: json as Record<string, unknown> };
}
