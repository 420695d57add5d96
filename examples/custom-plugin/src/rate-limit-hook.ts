/** The `onRequest` hook: one request taken from the client's bucket, or a 429 answer. */
import { RouterError, StateKey, formatDuration, toErrorResponse, type Counter, type StageHook } from 'switchyard';
import { ANONYMOUS_CLIENT, type ResolvedClientRateLimitOptions } from './options.js';
import type { Limit, TokenBuckets } from './token-buckets.js';

/** What the limiter decided for a request; other plugins read it with `event.state.get(CLIENT_RATE_LIMIT)`. */
export interface RateLimitDecision {
  /** The client the request was counted for (`anonymous` without a `graphql-client-name`). */
  readonly client: string;
  readonly allowed: boolean;
  /** Requests per window for this client. */
  readonly limit: number;
  /** Whole requests the client has left right now. */
  readonly remaining: number;
}

/** Request state this plugin owns. */
export const CLIENT_RATE_LIMIT = new StateKey<RateLimitDecision>('client-rate-limit');

/** Builds the hook over shared buckets. `requests` counts decisions by client (configured names only) and result. */
export function clientRateLimitHook(options: ResolvedClientRateLimitOptions, buckets: TokenBuckets, requests: Counter): StageHook<'request'> {
  // Client names come from a header: `constructor` or `__proto__` must not find Object.prototype's members.
  const configured = (client: string) => Object.hasOwn(options.clients, client);
  const limitOf = (client: string): Limit => {
    const own = configured(client) ? options.clients[client] : undefined;
    return own ? { requests: own.requests, window: own.window ?? options.window } : { requests: options.requests, window: options.window };
  };
  return function limitClientRequests(event) {
    const client = event.input.clientName || ANONYMOUS_CLIENT;
    const limit = limitOf(client);
    const taken = buckets.take(client, limit, performance.now());
    event.state.set(CLIENT_RATE_LIMIT, { client, allowed: taken.allowed, limit: limit.requests, remaining: taken.remaining });
    // Client names are chosen by clients: only configured ones become metric labels.
    requests.inc({ client: configured(client) ? client : 'other', result: taken.allowed ? 'allowed' : 'limited' });
    const headers = { 'ratelimit-limit': String(limit.requests), 'ratelimit-remaining': String(taken.remaining) };
    if (!taken.allowed) {
      event.log.debug({ client }, 'Client over its rate limit');
      // A client over its limit is the client's problem, not the plugin's: answer, never throw.
      const allowance = `${limit.requests} request${limit.requests === 1 ? '' : 's'} per ${formatDuration(limit.window)}`;
      // No status here: the code's declaration (errors.ts) gives 429.
      const refusal = new RouterError('RATE_LIMITED', `Client "${client}" is over its limit of ${allowance}; retry in ${taken.retryAfterSeconds}s.`, {
        headers: { ...headers, 'retry-after': String(taken.retryAfterSeconds) },
        extensions: { client, retryAfter: taken.retryAfterSeconds },
      });
      event.respondWith(toErrorResponse(refusal));
      return;
    }
    return function addRateLimitHeaders(after) {
      // The output may be shared (a cached answer): replace it, never change it.
      after.setOutput({ ...after.output, headers: { ...after.output.headers, ...headers } });
    };
  };
}
