/**
 * Coded errors. Every code a user can see is listed in docs/errors.md
 * (a test fails when a code thrown in source is missing there).
 */
import type { OperationResponse } from './pipeline/stages.js';

/** Codes that reach clients in `errors[].extensions.code` or in logs. */
export type ErrorCode =
  | 'GRAPHQL_PARSE_FAILED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'BAD_REQUEST'
  | 'OPERATION_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TOO_LARGE'
  | 'MAX_DEPTH_EXCEEDED'
  | 'MAX_ALIASES_EXCEEDED'
  | 'MAX_TOKENS_EXCEEDED'
  | 'MAX_FIELDS_EXCEEDED'
  | 'CSRF_PREVENTED'
  | 'SUBGRAPH_REQUEST_FAILED'
  | 'SUBGRAPH_INVALID_RESPONSE'
  | 'SUBGRAPH_TIMEOUT'
  | 'GRAPH_NOT_READY'
  | 'PLUGIN_ERROR'
  | 'INTERNAL_SERVER_ERROR'
  | 'CONFIG_INVALID'
  | 'SUPERGRAPH_INVALID'
  | 'PLUGIN_DEPENDENCY_MISSING'
  | 'PLUGIN_DUPLICATE'
  | 'COMPOSITION_FAILED'
  | 'QUERY_PLANNING_FAILED'
  | 'SUBSCRIPTION_NOT_SUPPORTED'
  | 'SUBSCRIPTION_LIMIT_EXCEEDED'
  | 'SUBSCRIPTION_UPSTREAM_FAILED'
  // Codes owned by built-in plugins; listed here so the catalogue stays one list.
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_HASH_MISMATCH'
  | 'PERSISTED_QUERY_INVALID_HASH'
  | 'PERSISTED_QUERY_UNSUPPORTED_VERSION'
  | 'QUERY_NOT_IN_SAFELIST'
  | 'UNAUTHENTICATED'
  | 'UNAUTHORIZED_FIELD_OR_TYPE'
  | (string & {}); // third-party plugins bring their own codes

export interface RouterErrorOptions {
  /** HTTP status the router answers with when this error ends the request. */
  readonly status?: number;
  /** Extra response headers (for example `Cache-Control`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Response path, when the error belongs to a field. */
  readonly path?: ReadonlyArray<string | number>;
  /** Extra `extensions` fields beside `code`. */
  readonly extensions?: Readonly<Record<string, unknown>>;
  /** Plugin that raised it; prefixed to the message in logs. */
  readonly plugin?: string;
  readonly cause?: unknown;
}

/** An error with a stable code. GraphQL-visible errors carry it in `extensions.code`. */
export class RouterError extends Error {
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly path: ReadonlyArray<string | number> | undefined;
  readonly extensions: Readonly<Record<string, unknown>> | undefined;
  readonly plugin: string | undefined;

  constructor(code: ErrorCode, message: string, options: RouterErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RouterError';
    this.code = code;
    this.status = options.status;
    this.headers = options.headers;
    this.path = options.path;
    this.extensions = options.extensions;
    this.plugin = options.plugin;
  }
}

/** Shape of one entry of a GraphQL response's `errors` list, as the router sends it. */
export interface GraphQLErrorJSON {
  message: string;
  path?: Array<string | number>;
  locations?: Array<{ line: number; column: number }>;
  extensions?: Record<string, unknown>;
}

/** Converts a RouterError into the JSON entry clients receive. */
export function toGraphQLErrorJSON(error: RouterError): GraphQLErrorJSON {
  const json: GraphQLErrorJSON = { message: error.message };
  if (error.path) json.path = [...error.path];
  json.extensions = { ...error.extensions, code: error.code };
  return json;
}

/**
 * The answer for an operation refused with `error`: one entry in `errors`
 * carrying its code, the error's status (default 500) and headers. A plugin
 * refuses a request with `event.respondWith(toErrorResponse(error))` in
 * `onRequest` instead of throwing, which would be logged as its own failure.
 */
export function toErrorResponse(error: RouterError): OperationResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(error.headers ?? {})) headers[name.toLowerCase()] = value;
  return { body: { errors: [toGraphQLErrorJSON(error)] }, status: error.status ?? 500, headers };
}

/** A RouterError whose message is the one a user should read, with the plugin named. */
export function pluginError(plugin: string, cause: unknown): RouterError {
  if (cause instanceof RouterError) {
    if (cause.plugin) return cause;
    const { status, headers, path, extensions } = cause;
    return new RouterError(cause.code, cause.message, { status, headers, path, extensions, plugin, cause: cause.cause });
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return new RouterError('PLUGIN_ERROR', `[${plugin}] ${message}`, { status: 500, plugin, cause });
}
