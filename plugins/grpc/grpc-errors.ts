/**
 * What a failed RPC becomes in the subgraph response: a GraphQL error at the
 * fields it would have filled, with a stable `extensions.code` and the gRPC
 * status in `extensions.grpc` (docs/grpc.md, "Errors").
 *
 * A status the service sent (`NOT_FOUND`, or `UNAVAILABLE`, with its own
 * message) stands for a subgraph error: `subgraph_error_propagation` decides
 * what of it clients see, as for an HTTP subgraph's errors. Failures the
 * router observed itself (deadline, service unreachable, a dropped
 * connection, an answer that does not fit the schema) are router-made, like
 * an HTTP subgraph that did not answer: they reach clients as made, with the
 * subgraph's name.
 */
import type { GraphQLErrorJSON } from '../../src/index.js';
import { InvalidAnswerError, RpcStatusError } from './grpc-channels.js';
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
  /** Told @grpc/grpc-js's details of an UNAVAILABLE the router observed, which clients do not get: for the router's log. */
  readonly unreachable?: (subgraph: string, details: string) => void;
}

function located(error: GraphQLErrorJSON, path: ResponsePath): GraphQLErrorJSON {
  return path.length > 0 ? { ...error, path: [...path] } : error;
}

/**
 * A GraphQL error for an RPC status. A status the service sent is its own
 * error, whatever its code (its message may say more than clients should
 * see, so subgraph_error_propagation filters it). A status the router or
 * @grpc/grpc-js made is the router's own: the deadline -> `SUBGRAPH_TIMEOUT`,
 * anything else (no connection, a dropped one, a cancelled call) ->
 * `SUBGRAPH_REQUEST_FAILED`.
 */
export function statusError(error: RpcStatusError, { subgraph, timeoutMs, unreachable }: ErrorContext): GraphQLErrorJSON {
  const grpc = { code: error.status, status: error.statusName, method: error.method };
  if (error.sentByService) {
    return { message: error.details || `gRPC ${error.method} failed with ${error.statusName}.`, extensions: { code: error.statusName, grpc } };
  }
  if (error.statusName === 'DEADLINE_EXCEEDED') {
    return routerMade({ message: `Subgraph "${subgraph}" did not answer within ${timeoutMs}ms (gRPC ${error.method}).`, extensions: { code: 'SUBGRAPH_TIMEOUT', grpc } });
  }
  // For UNAVAILABLE, @grpc/grpc-js's details name the service's address ("connect ECONNREFUSED 10.0.3.7:50051", "DNS resolution failed
  // for catalog.internal:50051"): clients get the status alone, as an HTTP subgraph's failure names only its error code.
  const details = error.details && error.statusName !== 'UNAVAILABLE' ? `: ${error.details}` : '';
  if (error.details && error.statusName === 'UNAVAILABLE') unreachable?.(subgraph, error.details);
  return routerMade({
    message: `Request to subgraph "${subgraph}" failed: gRPC ${error.method}: ${error.statusName}${details}.`,
    extensions: { code: 'SUBGRAPH_REQUEST_FAILED', grpc },
  });
}

/** Any failure of one step of a gRPC fetch, as a GraphQL error at `path`. */
export function fetchError(error: unknown, path: ResponsePath, context: ErrorContext): GraphQLErrorJSON {
  if (error instanceof RpcStatusError) return located(statusError(error, context), path);
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof InvalidAnswerError) {
    return routerMade(located({ message: `Subgraph "${context.subgraph}" sent an invalid gRPC answer: ${reason}.`, extensions: { code: 'SUBGRAPH_INVALID_RESPONSE' } }, path));
  }
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
