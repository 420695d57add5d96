/**
 * The methods the listener serves, bound to the graph being served: each
 * operation validated against the graph's client-facing schema and given
 * its request and response converters. Rebuilt when a contract or the
 * graph changes; a method that does not fit the graph, or whose converters
 * cannot be built, answers `internal` with the reason (logged once, naming
 * the operation) while the other methods are served.
 */
import type { DescMethod } from '@bufbuild/protobuf';
import { Kind, specifiedRules, validate, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { ContractOperation } from '../../src/connect/index.js';
import type { Logger } from '../../src/index.js';
import type { LoadedContract } from './contract-loader.js';
import { buildRequestPlan, PlanMismatch, type VariablesFromMessage } from './request-plan.js';
import { buildResponsePlan, type JsonFromData } from './response-plan.js';

/** How one method's calls are transcoded. */
export interface CallPlan {
  /** Request message -> variables. */
  readonly variables: VariablesFromMessage;
  /** `data` -> response message JSON. */
  readonly json: JsonFromData;
}

/** One RPC the listener serves. */
export interface MethodEntry {
  /** `/<package>.<Service>/<Method>` */
  readonly path: string;
  readonly method: DescMethod;
  readonly operation: ContractOperation;
  /** Set when the operation runs on the current graph. */
  readonly plan: CallPlan | undefined;
  /** Why it cannot run, when `plan` is not set. */
  readonly problem: string | undefined;
}

/** Methods by path. */
export type MethodTable = ReadonlyMap<string, MethodEntry>;

function planFor(method: DescMethod, operation: ContractOperation, schema: GraphQLSchema, variableNames: ReadonlyMap<string, string>): CallPlan {
  const errors = validate(schema, operation.document, specifiedRules);
  if (errors.length > 0) throw new PlanMismatch(`the operation does not validate against the graph: ${errors[0]!.message}`);
  const definition = operation.document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = new Map(operation.document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  return {
    variables: buildRequestPlan(method.input, definition, schema, variableNames),
    json: buildResponsePlan(method.output, definition, fragments, schema),
  };
}

/**
 * Binds the contracts' methods to a graph's schema (`undefined` before a
 * graph is loaded: every method then waits for one).
 */
export function bindMethods(contracts: readonly LoadedContract[], schema: GraphQLSchema | undefined, log: Logger): MethodTable {
  const table = new Map<string, MethodEntry>();
  for (const contract of contracts) {
    const service = contract.proto.service;
    for (const method of service.methods) {
      const operation = contract.operations.get(method.name)!;
      const path = `/${service.typeName}/${method.name}`;
      if (!schema) {
        table.set(path, { path, method, operation, plan: undefined, problem: undefined });
        continue;
      }
      try {
        table.set(path, { path, method, operation, plan: planFor(method, operation, schema, contract.proto.variableNames), problem: undefined });
      } catch (error) {
        // One method that cannot be prepared answers `internal` on its own; the others are served.
        const problem =
          error instanceof PlanMismatch
            ? `${operation.file}: ${error.message}; regenerate the contract against this graph`
            : `${operation.file}: the router could not prepare operation ${operation.name}; see the router log`;
        log.error(
          { rpc: path, operation: operation.name, reason: problem, ...(error instanceof PlanMismatch ? {} : { err: error }) },
          'Connect RPC cannot be served on this graph',
        );
        table.set(path, { path, method, operation, plan: undefined, problem });
      }
    }
  }
  return table;
}
