/** Options of the client rate limit, as written under `options` in router.config.yaml. */
import { duration, z } from 'switchyard';

/** A limit: so many requests per window. */
const limitShape = {
  /** Requests a client may send per window (a burst of this many is fine). Default: `100`. */
  requests: z.int().min(1),
  /** The window, as a duration (`1s`, `1m`, `1h`). Default: `1m`. */
  window: duration({ min: '1s', max: '24h' }),
};

/** Schema of the plugin's options. */
export const clientRateLimitOptionsSchema = z.strictObject({
  requests: limitShape.requests.default(100),
  window: limitShape.window.prefault('1m'),
  /** Limits of named clients (their `graphql-client-name`), replacing the default for them. Default: none. */
  clients: z.record(z.string().min(1), z.strictObject({ requests: limitShape.requests, window: limitShape.window.optional() })).default({}),
  /** Clients tracked at once; the one seen least recently is forgotten first. Default: `10000`. */
  max_clients: z.int().min(1).default(10_000),
});

/** The options as written (durations as text). */
export type ClientRateLimitOptions = z.input<typeof clientRateLimitOptionsSchema>;
/** The options with defaults filled in (durations in milliseconds). */
export type ResolvedClientRateLimitOptions = z.output<typeof clientRateLimitOptionsSchema>;

/** Requests without a `graphql-client-name` header are counted as this client. */
export const ANONYMOUS_CLIENT = 'anonymous';
