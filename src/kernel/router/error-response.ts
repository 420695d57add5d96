import { GraphQLError } from 'graphql';
import { RouterError, toErrorResponse, type GraphQLErrorJSON } from '../errors.js';
import type { Logger } from '../logger.js';
import type { OperationResponse } from '../pipeline/stages.js';

/** Codes of errors that reject the request itself (GraphQL over HTTP "request errors"). */
const REQUEST_ERROR_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/** The response for an operation that failed as a whole. */
export function errorResponse(error: unknown, log: Logger): OperationResponse {
  if (error instanceof RouterError) {
    if (error.code === 'PLUGIN_ERROR' || error.code === 'INTERNAL_SERVER_ERROR') {
      log.error({ err: error.cause ?? error, plugin: error.plugin }, error.message);
    }
    return { ...toErrorResponse(error), requestError: REQUEST_ERROR_CODES.has(error.code) };
  }
  if (error instanceof GraphQLError) {
    return requestErrors([error], 'GRAPHQL_VALIDATION_FAILED');
  }
  if (isStackOverflow(error)) {
    // Only a client's nesting (a document, a value) runs the recursive readers this deep: its fault, not the router's.
    log.debug({ err: error }, 'request nested too deeply to be read');
    return {
      body: { errors: [{ message: 'The request is nested too deeply to be read.', extensions: { code: 'BAD_REQUEST' } }] },
      status: 400,
      requestError: true,
      headers: {},
    };
  }
  log.error({ err: error }, 'unexpected error while running an operation');
  return {
    body: { errors: [{ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
    status: 500,
    headers: {},
  };
}

/**
 * A 400 request error carrying GraphQL errors (syntax, validation, variables).
 * graphql-js hands back what its helpers threw among these errors; anything
 * that is not a GraphQLError keeps only its message.
 */
export function requestErrors(errors: readonly GraphQLError[], code: string): OperationResponse {
  const json: GraphQLErrorJSON[] = (errors as readonly unknown[]).map((error) => {
    const entry: GraphQLErrorJSON = error instanceof GraphQLError ? (error.toJSON() as GraphQLErrorJSON) : { message: error instanceof Error ? error.message : String(error) };
    entry.extensions = { ...entry.extensions, code: (entry.extensions?.code as string | undefined) ?? code };
    return entry;
  });
  return { body: { errors: json }, status: 400, requestError: true, headers: {} };
}

/** A JavaScript stack overflow (V8's `RangeError: Maximum call stack size exceeded`). */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && error.message === 'Maximum call stack size exceeded';
}
