/**
 * Connect errors as the listener answers them: the JSON body
 * `{code, message, details?}` of the Connect protocol with the status of its
 * table, or another status where INTERFACES.md fixes one (405 for a
 * mutation over GET). GraphQL errors travel as details of type
 * `google.protobuf.Struct`, readable in each detail's `debug`.
 */
import { fromJson, type JsonObject } from '@bufbuild/protobuf';
import { StructSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import type { GraphQLErrorJSON } from '../../src/index.js';

/** A Connect error with the HTTP status and headers to answer it with. */
export class ConnectFailure extends ConnectError {
  /** HTTP status; default: the protocol's status for the code. */
  readonly status: number;

  constructor(code: Code, message: string, options: { status?: number; headers?: Record<string, string>; details?: ConnectError['details'] } = {}) {
    super(message, code, options.headers);
    this.status = options.status ?? codeToHttpStatus(code);
    if (options.details) this.details.push(...options.details);
  }
}

/** A `invalid_argument` (400) error. */
export function invalidArgument(message: string): ConnectFailure {
  return new ConnectFailure(Code.InvalidArgument, message);
}

/** GraphQL errors as Connect error details (`google.protobuf.Struct` each). */
export function graphqlErrorDetails(errors: readonly GraphQLErrorJSON[]): ConnectError['details'] {
  return errors.map((error) => ({ desc: StructSchema, value: fromJson(StructSchema, JSON.parse(JSON.stringify(error)) as JsonObject) }));
}

/** Any error as a Connect failure: unexpected ones become `internal` without their text. */
export function asFailure(error: unknown): ConnectFailure {
  if (error instanceof ConnectFailure) return error;
  if (error instanceof ConnectError) return new ConnectFailure(error.code, error.rawMessage, { details: error.details });
  return new ConnectFailure(Code.Internal, 'internal error; see the router log');
}

/** Status, headers and body of an error answer. */
export function errorAnswer(failure: ConnectFailure): { status: number; headers: Record<string, string>; body: Uint8Array } {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  failure.metadata.forEach((value, key) => {
    headers[key] = value;
  });
  return { status: failure.status, headers, body: errorToJsonBytes(failure, {}) };
}
