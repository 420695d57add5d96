/**
 * One Connect call: the request message becomes the operation's variables,
 * the operation runs through `router.execute` (so the response cache and
 * every other plugin apply, with origin `connect`), and its `data` becomes
 * the response message. GraphQL errors without data fail the call with
 * `unknown`; with partial data it succeeds and the errors go in the
 * `Switchyard-GraphQL-Errors` header.
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

/** Header with the GraphQL errors of a partial answer. */
export const GRAPHQL_ERRORS_HEADER = 'switchyard-graphql-errors';

/** Larger error lists keep their first errors only, so the header stays within common proxy limits. */
const MAX_ERRORS_HEADER = 8 * 1024;

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

/** JSON of the errors, non-ASCII escaped (header values are Latin-1), cut to whole errors under the size limit. */
export function errorsHeaderValue(errors: readonly GraphQLErrorJSON[]): string {
  const escape = (text: string) => text.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  let kept = errors.length;
  let value = escape(JSON.stringify(errors));
  while (value.length > MAX_ERRORS_HEADER && kept > 1) {
    kept -= 1;
    value = escape(JSON.stringify(errors.slice(0, kept)));
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

/** The Connect code of an operation that failed as a whole, by its first error's code. */
function connectCodeOf(code: unknown): Code {
  switch (code) {
    case 'GRAPH_NOT_READY':
      return Code.Unavailable;
    case 'UNAUTHENTICATED':
      return Code.Unauthenticated;
    case 'UNAUTHORIZED_FIELD_OR_TYPE':
      return Code.PermissionDenied;
    default:
      return Code.Unknown;
  }
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
  if (data === null || data === undefined) {
    if (errors && errors.length > 0) {
      throw new ConnectFailure(connectCodeOf(errors[0]!.extensions?.code), errors[0]!.message, { details: graphqlErrorDetails(errors) });
    }
    throw new ConnectFailure(Code.Internal, 'the operation answered without data or errors');
  }
  const headers: Record<string, string> = {};
  if (errors && errors.length > 0) headers[GRAPHQL_ERRORS_HEADER] = errorsHeaderValue(errors);
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
