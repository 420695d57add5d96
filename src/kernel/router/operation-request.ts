/**
 * The one converter to the kernel's `OperationRequest`: from the GraphQL
 * parameters any entry read (a GET query string or JSON body through
 * `readParams`, a batch entry, the SDK's `execute`) plus where
 * and how they arrived.
 */
import type { OperationRequest } from '../pipeline/stages.js';
import { clientNameOf } from './client-name.js';

/** A GraphQL request's parameters, checked (GraphQL over HTTP, plus persisted document ids). */
export interface GraphQLParams {
  /** Absent for persisted operations (`documentId`, `extensions.persistedQuery`): a plugin supplies the text. */
  readonly query: string | undefined;
  readonly operationName: string | undefined;
  readonly variables: Readonly<Record<string, unknown>> | undefined;
  readonly extensions: Readonly<Record<string, unknown>> | undefined;
  readonly documentId: string | undefined;
}

/** How the parameters arrived. */
export interface ArrivalInfo {
  /** Request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly method: 'GET' | 'POST';
  /** Listener name (`http`, `execute`, a plugin's). */
  readonly origin: string;
  /** Default: the `graphql-client-name` header. */
  readonly clientName?: string;
}

export function operationRequestOf(params: GraphQLParams, arrival: ArrivalInfo): OperationRequest {
  return {
    query: params.query,
    operationName: params.operationName,
    variables: params.variables,
    extensions: params.extensions,
    documentId: params.documentId,
    headers: arrival.headers,
    method: arrival.method,
    clientName: arrival.clientName ?? clientNameOf(arrival.headers),
    origin: arrival.origin,
  };
}

/** Request headers from node's raw list, as the fetch API reports them: lower-case names, repeated ones joined with `, `. */
export function headersFromRaw(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const known = headers[name];
    headers[name] = known === undefined ? value : `${known}, ${value}`;
  }
  return headers;
}
