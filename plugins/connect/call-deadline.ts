/**
 * A call's deadline from its request: `Connect-Timeout-Ms` (Connect) or
 * `Grpc-Timeout` (gRPC, gRPC-Web). Node cannot hold a timer longer than
 * 2^31-1 ms: a longer one fires at once (with a TimeoutOverflowWarning), so
 * a generous deadline would fail the call immediately. Deadlines are capped
 * to that instead: the call gets the most time there is.
 */
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { invalidArgument } from './connect-errors.js';

/** The longest timer Node keeps, about 24.8 days. */
export const MAX_DEADLINE_MS = 2 ** 31 - 1;

/** `Grpc-Timeout` at its largest that fits: whole seconds below MAX_DEADLINE_MS, within the 8 digits gRPC allows. */
const MAX_GRPC_TIMEOUT = `${Math.floor(MAX_DEADLINE_MS / 1000)}S`;
const GRPC_UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 1e-3, n: 1e-6 };

type AnyRequest = IncomingMessage | Http2ServerRequest;

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `Connect-Timeout-Ms`: a positive whole number of at most 10 digits, as
 * the protocol says, else `invalid_argument` (400); capped to
 * MAX_DEADLINE_MS. Undefined when the header is absent.
 */
export function connectTimeoutOf(req: AnyRequest): number | undefined {
  const text = single(req.headers['connect-timeout-ms']);
  if (text === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(text)) throw invalidArgument(`Connect-Timeout-Ms must be a whole number of milliseconds (at most 10 digits), got "${text.slice(0, 40)}"`);
  const ms = Number(text);
  if (ms === 0) throw invalidArgument('Connect-Timeout-Ms must be at least 1 (milliseconds)');
  return Math.min(ms, MAX_DEADLINE_MS);
}

/**
 * Before connect-node reads them: checks `Connect-Timeout-Ms` (throws
 * `invalid_argument` as above) and rewrites a deadline header beyond
 * MAX_DEADLINE_MS to the cap. A malformed `Grpc-Timeout` is left for
 * connect-node to refuse.
 */
export function capDeadlineHeaders(req: AnyRequest): void {
  const connectMs = connectTimeoutOf(req);
  if (connectMs !== undefined) req.headers['connect-timeout-ms'] = String(connectMs);
  const grpc = /^(\d{1,8})([HMSmun])$/.exec(single(req.headers['grpc-timeout']) ?? '');
  if (grpc && Number(grpc[1]) * GRPC_UNIT_MS[grpc[2]!]! > MAX_DEADLINE_MS) req.headers['grpc-timeout'] = MAX_GRPC_TIMEOUT;
}
