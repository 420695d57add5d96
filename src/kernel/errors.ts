/**
 * Coded errors. Every code is declared once, with its default status and its
 * documentation (error-catalogue.ts); docs/errors.md is written from there.
 */
import { errorSpec } from './error-catalogue.js';
import type { kernelErrors } from './kernel-errors.js';
import type { OperationResponse } from './pipeline/stages.js';

/**
 * The error codes the compiler accepts, as keys. The router's own are here;
 * a plugin adds its codes by augmenting this interface (and declares them at
 * run time with `definePlugin({ errors })`):
 *
 * ```ts
 * declare module 'switchyard' {
 *   interface ErrorCodes {
 *     RATE_LIMITED: true;
 *   }
 * }
 * ```
 */
export interface ErrorCodes extends Record<keyof typeof kernelErrors, true> {}

/** Codes that reach clients in `errors[].extensions.code` or in logs: one of `ErrorCodes`. */
export type ErrorCode = Extract<keyof ErrorCodes, string>;

export interface RouterErrorOptions {
  /** HTTP status the router answers with when this error ends the request. Default: the code's declared status (none: 500). */
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

  /** `message` and `options.status` default to what the code's declaration says. */
  constructor(code: ErrorCode, message?: string, options: RouterErrorOptions = {}) {
    const spec = errorSpec(code);
    super(message ?? spec?.message ?? code, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RouterError';
    this.code = code;
    this.status = options.status ?? spec?.status;
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
