/**
 * One Connect call: the request message becomes the operation's variables,
 * the operation runs through `router.execute` (so the response cache and
 * every other plugin apply, with origin `connect`), and its `data` becomes
 * the response message. Any GraphQL error fails the call, as Cosmo's
 * Connect handler does: without data with `unknown` (or the code the
 * router's status names) and the first message; with partial data with
 * `unknown`, "GraphQL partial success with errors", and the data in the
 * `GraphQL-Partial-Data` header. The errors are in `details` and in the
 * `GraphQL-Errors` header either way.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { GraphQLErrorJSON, RouterHandle } from '../../src/index.js';
import { ConnectFailure, graphqlErrorDetails } from './connect-errors.js';
import type { MethodEntry } from './method-table.js';
import type { JsonFromData } from './response-plan.js';

/** What a call brings. */
export interface CallInput {
  /** The request message (a @bufbuild/protobuf message object). */
  readonly message: Record<string, unknown>;
  /** Client request headers, lower-case names (the router's `headers` rules pick what subgraphs get). */
  readonly headers: Readonly<Record<string, string>>;
  /** `GET` only for queries. */
  readonly httpMethod: 'GET' | 'POST';
  /** Ends the call: client gone, deadline, shutdown. */
  readonly signal: AbortSignal;
}

/** What a call answers. */
export interface CallOutput {
  /** The response message in proto3 JSON. */
  readonly json: Record<string, unknown>;
  /** Response headers, lower-case names. */
  readonly headers: Record<string, string>;
}

/** Error metadata (response headers) as Cosmo's Connect handler names them. */
export const ERROR_HEADERS = {
  /** `CRITICAL` (no data) or `PARTIAL` (data and errors). */
  classification: 'error-classification',
  /** The GraphQL errors, a JSON array. */
  errors: 'graphql-errors',
  /** With `PARTIAL`: the GraphQL `data`, as JSON (left out beyond 8KB). */
  partialData: 'graphql-partial-data',
} as const;

/** Message of a call that got partial data, as Cosmo words it. */
export const PARTIAL_MESSAGE = 'GraphQL partial success with errors';

/** Header values stay under this, within common proxy limits: error lists keep their first errors, larger partial data is left out. */
const MAX_HEADER = 8 * 1024;

/** Request headers that describe the Connect or gRPC exchange itself, not the client: never passed on. */
const TRANSPORT_HEADER = /^(content-(type|length|encoding)|accept-encoding|connect-|grpc-|te$|host$|connection$|keep-alive$|transfer-encoding$|upgrade$|x-grpc-web$|x-user-agent$)/;

/** Request headers as `router.execute` takes them. */
export function forwardedHeaders(entries: Iterable<[string, string]>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!lower.startsWith(':') && !TRANSPORT_HEADER.test(lower)) headers[lower] = value;
  }
  return headers;
}

/** JSON with non-ASCII characters escaped: header values are Latin-1. */
function headerJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON of the errors, cut to whole errors under the size limit. */
export function errorsHeaderValue(errors: readonly GraphQLErrorJSON[]): string {
  let kept = errors.length;
  let value = headerJson(errors);
  while (value.length > MAX_HEADER && kept > 1) {
    kept -= 1;
    value = headerJson(errors.slice(0, kept));
  }
  return value;
}

/** Why a call's signal ended it: its deadline, or the client leaving. */
function abortFailure(reason: unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') return new ConnectFailure(Code.DeadlineExceeded, 'the call did not finish within its deadline');
  return new ConnectFailure(Code.Canceled, 'the call was canceled');
}

/** The call's result, or its end when the signal fires first (a deadline does not wait for the subgraphs). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortFailure(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortFailure(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The Connect code of an operation that failed as a whole. A router status
 * other than 200 names it as Cosmo maps its GraphQL endpoint's statuses
 * (401, 403, 409, 429, 502-504); else the first error's code does
 * (`BAD_USER_INPUT` is `invalid_argument`: Cosmo answers `internal`); else `unknown`.
 */
function connectCodeOf(status: number, code: unknown): Code {
  switch (status) {
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 409:
      return Code.Aborted;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.Unavailable;
  }
  switch (code) {
    case 'GRAPH_NOT_READY':
      return Code.Unavailable;
    case 'UNAUTHENTICATED':
      return Code.Unauthenticated;
    case 'UNAUTHORIZED_FIELD_OR_TYPE':
      return Code.PermissionDenied;
    // The message's values were refused by the graph (a value a custom scalar rejects): the client's mistake, never a 5xx.
    case 'BAD_USER_INPUT':
      return Code.InvalidArgument;
    default:
      return Code.Unknown;
  }
}

/** The failure of a call whose operation answered GraphQL errors. */
export function graphqlFailure(status: number, data: Record<string, unknown> | null | undefined, errors: readonly GraphQLErrorJSON[]): ConnectFailure {
  const details = graphqlErrorDetails(errors);
  const headers: Record<string, string> = { [ERROR_HEADERS.errors]: errorsHeaderValue(errors) };
  if (data === null || data === undefined) {
    headers[ERROR_HEADERS.classification] = 'CRITICAL';
    return new ConnectFailure(connectCodeOf(status, errors[0]!.extensions?.code), errors[0]!.message, { details, headers });
  }
  headers[ERROR_HEADERS.classification] = 'PARTIAL';
  const partial = headerJson(data);
  if (partial.length <= MAX_HEADER) headers[ERROR_HEADERS.partialData] = partial;
  return new ConnectFailure(Code.Unknown, PARTIAL_MESSAGE, { details, headers });
}

/** Runs one call. Throws a `ConnectFailure` for a call that fails. */
export async function callOperation(router: RouterHandle, entry: MethodEntry, input: CallInput): Promise<CallOutput> {
  const plan = entry.plan;
  if (!plan) {
    if (entry.problem === undefined) throw new ConnectFailure(Code.Unavailable, 'no graph is loaded yet; try again shortly');
    throw new ConnectFailure(Code.Internal, `${entry.method.name} cannot run on the graph being served: ${entry.problem}`);
  }
  const variables = plan.variables(input.message);
  const execution = router.execute({
    query: entry.operation.text,
    operationName: entry.operation.name,
    variables,
    headers: input.headers,
    method: input.httpMethod,
    origin: 'connect',
    signal: input.signal,
  });
  const response = await untilAborted(execution, input.signal);
  const { data, errors } = response.body;
  if (errors && errors.length > 0) throw graphqlFailure(response.status, data, errors);
  if (data === null || data === undefined) throw new ConnectFailure(Code.Internal, 'the operation answered without data or errors');
  const headers: Record<string, string> = {};
  // GET answers may be kept by CDNs and browsers: pass on the router's cache policy (the response cache merges it from the subgraphs').
  const cacheControl = response.headers['cache-control'];
  if (input.httpMethod === 'GET' && cacheControl !== undefined) headers['cache-control'] = cacheControl;
  return { json: messageJson(plan.json, data), headers };
}

/**
 * Response messages by the data they were converted from: requests that
 * received the very same shaped data (the router shares it between requests
 * with identical subgraph answers) share the conversion too.
 */
const converted = new WeakMap<object, { readonly convert: JsonFromData; readonly json: Record<string, unknown> }>();

function messageJson(convert: JsonFromData, data: Record<string, unknown>): Record<string, unknown> {
  const known = converted.get(data);
  if (known?.convert === convert) return known.json;
  const json = convert(data);
  converted.set(data, { convert, json });
  return json;
}
