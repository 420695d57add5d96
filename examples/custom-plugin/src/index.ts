/**
 * switchyard-plugin-client-rate-limit: per-client rate limiting for the
 * Switchyard router. Clients are told apart by their `graphql-client-name`
 * header; each has a token bucket (`requests` per `window`, with overrides
 * per client). Over the limit, a request is answered 429 with the GraphQL
 * error code `RATE_LIMITED` and a `Retry-After` header.
 *
 * ```ts
 * import { useClientRateLimit } from 'switchyard-plugin-client-rate-limit';
 * createRouter({ plugins: [useClientRateLimit({ requests: 100, window: '1m', clients: { web: { requests: 1000 } } })] });
 * ```
 */
import { definePlugin, formatDuration, type PluginFactory } from 'switchyard';
import { clientRateLimitErrors } from './errors.js';
import { clientRateLimitOptionsSchema } from './options.js';
import { clientRateLimitHook } from './rate-limit-hook.js';
import { TokenBuckets } from './token-buckets.js';

export { clientRateLimitErrors } from './errors.js';
export { ANONYMOUS_CLIENT, clientRateLimitOptionsSchema, type ClientRateLimitOptions, type ResolvedClientRateLimitOptions } from './options.js';
export { CLIENT_RATE_LIMIT, type RateLimitDecision } from './rate-limit-hook.js';

/**
 * `useClientRateLimit(options)`: the plugin for `createRouter({ plugins })`.
 * Annotated so the declaration names zod through `switchyard`, not through
 * switchyard's own node_modules.
 */
export const useClientRateLimit: PluginFactory<typeof clientRateLimitOptionsSchema> = definePlugin({
  name: 'client-rate-limit',
  options: clientRateLimitOptionsSchema,
  errors: clientRateLimitErrors,
  setup(ctx, options) {
    const buckets = new TokenBuckets(options.max_clients);
    const requests = ctx.metrics.counter('client_rate_limit_requests_total', 'Requests seen by the client rate limit, by client and result', ['client', 'result']);
    ctx.log.info({ requests: options.requests, window: formatDuration(options.window), clients: Object.keys(options.clients).length }, 'Client rate limit enabled');
    return {
      hooks: { onRequest: clientRateLimitHook(options, buckets, requests) },
      stop: () => buckets.clear(),
    };
  },
});

/** The router loads a plugin package from config through its default export. */
export default useClientRateLimit;
