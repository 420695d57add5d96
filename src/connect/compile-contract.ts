/**
 * Contract -> proto: each operation compiled by Cosmo's operations-to-proto
 * compiler (@wundergraph/protographic), one file at a time with the lock
 * carried from one to the next, then merged into one service, the way
 * `wgc grpc-service generate --with-operations` does it. A contract
 * generated here is the one Cosmo's tooling writes for the same operations.
 */
import { buildSchema, type GraphQLSchema } from 'graphql';
import type { ProtoLock } from '@wundergraph/protographic';
import { contractError, type ContractOperation } from './contract-operations.js';
import { loadContractProto } from './contract-proto.js';
import type { ContractNames } from './contract-package.js';

/** Options of `compileContract`. */
export interface CompileContractOptions extends ContractNames {
  /** The schema the operations run against: SDL text or a built schema (for a federated graph, its client-facing schema). */
  readonly schema: string | GraphQLSchema;
  /** The contract's operations, in RPC order. */
  readonly operations: readonly ContractOperation[];
  /** The previous lock (`contract.proto.lock.json`, parsed). Default: none, every number fresh. */
  readonly lock?: ProtoLock;
}

/** A compiled contract. */
export interface CompiledContract {
  /** `contract.proto` text. */
  readonly proto: string;
  /** The lock to write beside it (field numbers, kept stable by the next generation). */
  readonly lock: ProtoLock;
}

/** The SDL read as protographic reads it: federation directives and all, without SDL validation. */
function schemaOf(schema: string | GraphQLSchema): GraphQLSchema {
  if (typeof schema !== 'string') return schema;
  try {
    return buildSchema(schema, { assumeValid: true, assumeValidSDL: true });
  } catch (error) {
    throw contractError(`the schema cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Invalid GraphQL operation:\n/, 'does not validate against the schema: ').replace(/\n/g, '; ');
}

/**
 * Compiles the operations into one proto service. Throws
 * `CONNECT_CONTRACT_INVALID` naming the operation's file when it does not
 * validate against the schema or uses something the compiler cannot map
 * (for example nested lists, whose generated wrapper messages would not
 * resolve).
 */
export async function compileContract({ schema, operations, packageName, serviceName, lock }: CompileContractOptions): Promise<CompiledContract> {
  // Loaded here: the compiler pulls in Cosmo's composition library, which only generation needs.
  const { compileOperationsToProto, rootToProtoText, protobuf } = await import('@wundergraph/protographic');
  if (operations.length === 0) throw contractError('the contract has no operations');
  const built = schemaOf(schema);
  const roots: InstanceType<typeof protobuf.Root>[] = [];
  let current = lock;
  for (const operation of operations) {
    let result: ReturnType<typeof compileOperationsToProto>;
    try {
      result = compileOperationsToProto(operation.document, built, {
        serviceName,
        packageName,
        includeComments: true,
        queryIdempotency: 'NO_SIDE_EFFECTS',
        lockData: current,
      });
    } catch (error) {
      throw contractError(`${operation.file}: ${operation.name} ${firstLine(error)}`, error);
    }
    // The compiler can emit types that do not exist (nested list wrappers name GraphQL types); refuse those here.
    try {
      loadContractProto(result.proto, 'contract.proto');
    } catch (error) {
      const reason = error instanceof Error ? error.message.replace(/^contract\.proto: /, '') : String(error);
      throw contractError(`${operation.file}: ${operation.name} cannot be mapped to protobuf (${reason}); nested lists ([[T]]) are not supported in contract operations`, error);
    }
    roots.push(result.root);
    current = result.lockData;
  }
  const merged = new protobuf.Root();
  const service = new protobuf.Service(serviceName);
  const seen = new Set<string>();
  // Messages and enums shared by several operations (input types, enums) are the same in each; the first is kept.
  for (const root of roots) {
    for (const nested of root.nestedArray) {
      if (nested instanceof protobuf.Service) {
        for (const method of nested.methodsArray) service.add(method);
      } else if (!seen.has(nested.name)) {
        seen.add(nested.name);
        merged.add(nested);
      }
    }
  }
  merged.add(service);
  return { proto: rootToProtoText(merged, { packageName, includeComments: true }), lock: current! };
}
