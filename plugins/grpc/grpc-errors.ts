/**
 * What a failed RPC becomes in the subgraph response: a GraphQL error at the
 * fields it would have filled, with a stable `extensions.code` and the gRPC
 * status in `extensions.grpc` (docs/grpc.md, "Errors").
 */
import type { GraphQLErrorJSON } from '../../src/index.js';
import { RpcStatusError } from './grpc-channels.js';
import { ProtoShapeError } from './proto-slot.js';
import type { ResponsePath } from './from-proto.js';

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
      return { message: `Subgraph "${subgraph}" did not answer within ${timeoutMs}ms (gRPC ${error.method}).`, extensions: { code: 'SUBGRAPH_TIMEOUT', grpc } };
    case 'UNAVAILABLE':
    case 'CANCELLED':
      return {
        message: `Request to subgraph "${subgraph}" failed: gRPC ${error.method}: ${error.statusName}${error.details ? `: ${error.details}` : ''}.`,
        extensions: { code: 'SUBGRAPH_REQUEST_FAILED', grpc },
      };
    default:
      return { message: error.details || `gRPC ${error.method} failed with ${error.statusName}.`, extensions: { code: error.statusName, grpc } };
  }
}

/** Any failure of one step of a gRPC fetch, as a GraphQL error at `path`. */
export function fetchError(error: unknown, path: ResponsePath, context: ErrorContext): GraphQLErrorJSON {
  if (error instanceof RpcStatusError) return located(statusError(error, context), path);
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof ProtoShapeError) {
    return located(
      {
        message: `Subgraph "${context.subgraph}" sent a response that does not fit its schema: ${reason} (regenerate the service and recompose).`,
        extensions: { code: 'SUBGRAPH_INVALID_RESPONSE' },
      },
      path,
    );
  }
  return located({ message: `Request to subgraph "${context.subgraph}" failed: ${reason}`, extensions: { code: 'SUBGRAPH_REQUEST_FAILED' } }, path);
}
