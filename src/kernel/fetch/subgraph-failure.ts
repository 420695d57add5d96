/**
 * Which failed subgraph calls mean "the subgraph is failing": what the
 * circuit breaker counts and what a retry may help. A call can also fail
 * without the subgraph being at fault: the router could not make the
 * request at all (its HTTP client refused a header, the agent was closed),
 * the caller gave up, or the subgraph answered and refused this one request
 * (a 4xx, often about the client's own headers). Counting those would let
 * one client open a subgraph's circuit for everyone.
 *
 * Built-in transports throw RouterErrors. A plugin's transport may throw a
 * plain error: it counts when it carries a network failure's code
 * (`ECONNREFUSED`, ...), and otherwise not, since nothing says the subgraph
 * is at fault (docs/plugins.md, transports).
 */
import { RouterError } from '../errors.js';

/**
 * Codes of undici errors that say the router's own request could not be
 * made, or was stopped by the router: nothing reached the subgraph, or what
 * did says nothing about its health.
 */
const ROUTER_SIDE_CAUSES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'UND_ERR_INVALID_RETURN_VALUE',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_ABORT',
  'UND_ERR_ABORTED',
  'UND_ERR_DESTROYED',
  'UND_ERR_CLOSED',
  'UND_ERR_MAX_ORIGINS_REACHED',
]);

/**
 * Codes of Node's and undici's errors that say the subgraph could not be
 * reached or dropped the connection: a plugin transport's plain error with
 * one of them counts as the subgraph being unavailable.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** How a failed call reflects on the subgraph. */
export type FailureKind =
  /** It did not answer in time. */
  | 'timeout'
  /** It could not be reached, dropped the connection, or answered 5xx without a GraphQL body. */
  | 'unavailable'
  /** Not the subgraph's doing: a request the router could not make, one the caller gave up on, a 4xx, or another code. */
  | 'not-the-subgraph';

/** Sorts a failed subgraph call; `signal` is the caller's (aborted: the caller gave up). */
export function failureKind(error: unknown, signal?: AbortSignal): FailureKind {
  if (signal?.aborted) return 'not-the-subgraph';
  if (!(error instanceof RouterError)) return networkFailure(error) ? 'unavailable' : 'not-the-subgraph';
  if (error.code === 'SUBGRAPH_TIMEOUT') return 'timeout';
  if (error.code !== 'SUBGRAPH_REQUEST_FAILED') return 'not-the-subgraph';
  const status = httpStatus(error);
  if (status !== undefined) return status >= 500 ? 'unavailable' : 'not-the-subgraph';
  return routerSideCause(error.cause) ? 'not-the-subgraph' : 'unavailable';
}

/** The status of a non-2xx answer without a GraphQL body (http-transport.ts). */
export function httpStatus(error: RouterError): number | undefined {
  return (error.extensions?.http as { status?: number } | undefined)?.status;
}

/** A plain error (or its cause) with a network failure's code. */
function networkFailure(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 3; at = at.cause, depth++) {
    const code = (at as Error & { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  }
  return false;
}

function routerSideCause(cause: unknown): boolean {
  if (!(cause instanceof Error)) return false;
  if (cause.name === 'AbortError') return true;
  const code = (cause as Error & { code?: unknown }).code;
  return typeof code === 'string' && ROUTER_SIDE_CAUSES.has(code);
}
