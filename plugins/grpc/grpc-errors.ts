/**
 * What a failed RPC becomes in the subgraph response: a GraphQL error at the
 * fields it would have filled, with a stable `extensions.code` and the gRPC
 * status in `extensions.grpc` (docs/grpc.md, "Errors").
 *
 * An error status the service chose (`NOT_FOUND`, with its own message)
 * stands for a subgraph error: `subgraph_error_propagation` decides what of
 * it clients see, as for an HTTP subgraph's errors. Failures the router
 * observed itself (deadline, service unreachable, an answer that does not fit
 * the schema) are router-made, like an HTTP subgraph that did not answer:
 * they reach clients as made, with the subgraph's name.
 */
import type { GraphQLErrorJSON } from '../../src/index.js';
import { RpcStatusError } from './grpc-channels.js';
import { ProtoShapeError } from './proto-slot.js';
import type { ResponsePath } from './from-proto.js';

/**
 * Marks an error as the router's own (the kernel forwards it as made). The
 * kernel's registered symbol (src/kernel/execute/subgraph-errors.ts,
 * `ROUTER_MADE_ERROR`), read through the symbol registry.
 */
const ROUTER_MADE_ERROR = Symbol.for('switchyard.router-made-error');

function routerMade(error: GraphQLErrorJSON): GraphQLErrorJSON {
  (error as GraphQLErrorJSON & { [ROUTER_MADE_ERROR]?: true })[ROUTER_MADE_ERROR] = true;
  return error;
}

/** Where an error happened and what a timeout was. */
export interface ErrorContext {
  readonly subgraph: string;
  /** The deadline of the fetch, for the timeout message. */
  readonly timeoutMs: number;
}

function located(error: GraphQLErrorJSON, path: ResponsePath): GraphQLErrorJSON {
  return path.length > 0 ? { ...error, path: [...path] } : error;
}

/** A GraphQL error for an RPC status. Deadline -> `SUBGRAPH_TIMEOUT`, unreachable -> `SUBGRAPH_REQUEST_FAILED`, else the status name. */
export function statusError(error: RpcStatusError, { subgraph, timeoutMs }: ErrorContext): GraphQLErrorJSON {
  const grpc = { code: error.status, status: error.statusName, method: error.method };
  switch (error.statusName) {
    case 'DEADLINE_EXCEEDED':
      return routerMade({ message: `Subgraph "${subgraph}" did not answer within ${timeoutMs}ms (gRPC ${error.method}).`, extensions: { code: 'SUBGRAPH_TIMEOUT', grpc } });
    case 'UNAVAILABLE':
    case 'CANCELLED':
      return routerMade({
        message: `Request to subgraph "${subgraph}" failed: gRPC ${error.method}: ${error.statusName}${error.details ? `: ${error.details}` : ''}.`,
        extensions: { code: 'SUBGRAPH_REQUEST_FAILED', grpc },
      });
    default:
      // The service's own error: filtered by subgraph_error_propagation like any subgraph error.
      return { message: error.details || `gRPC ${error.method} failed with ${error.statusName}.`, extensions: { code: error.statusName, grpc } };
  }
}

/** Any failure of one step of a gRPC fetch, as a GraphQL error at `path`. */
export function fetchError(error: unknown, path: ResponsePath, context: ErrorContext): GraphQLErrorJSON {
  if (error instanceof RpcStatusError) return located(statusError(error, context), path);
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof ProtoShapeError) {
    return routerMade(
      located(
        {
          message: `Subgraph "${context.subgraph}" sent a response that does not fit its schema: ${reason} (regenerate the service and recompose).`,
          extensions: { code: 'SUBGRAPH_INVALID_RESPONSE' },
        },
        path,
      ),
    );
  }
  return routerMade(located({ message: `Request to subgraph "${context.subgraph}" failed: ${reason}`, extensions: { code: 'SUBGRAPH_REQUEST_FAILED' } }, path));
}
