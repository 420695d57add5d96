/**
 * `authentication`: JWTs verified against the key sets (JWKS) of one or
 * more identity providers, in the request stage. A valid token puts the
 * caller's identity in request state (`AUTHENTICATION`); an invalid one is
 * answered 401 `UNAUTHENTICATED` before anything else runs; no token goes
 * on unauthenticated (the `authorization` plugin decides what that may
 * see, or refuses it with `authorization.require_authentication`).
 * `forward_claims` sends chosen claims to subgraphs as headers (and drops
 * client headers of those names). `ignore_introspection` marks tokenless
 * requests so that `require_authentication` lets introspection-only
 * documents through. docs/authentication.md
 */
import {
  addSubscriptionConnectionHeaders,
  definePlugin,
  endStreamBy,
  RouterError,
  toErrorResponse,
  type OperationResponse,
  type PluginFactory,
  type StageEvent,
} from '../../src/index.js';
import { JWT_ALGORITHMS, authenticationConfigSchema, authenticationSection } from './config.js';
import { authenticationErrors } from './errors.js';
import { AUTHENTICATION, INTROSPECTION_WITHOUT_TOKEN, type AuthenticatedIdentity } from './identity.js';
import { JwksProvider } from './jwks-provider.js';
import { TokenError, TokenVerifier } from './verify-token.js';

export {
  JWT_ALGORITHMS,
  authenticationConfigSchema,
  type AuthenticationConfig,
  type AuthenticationConfigInput,
  type JwksProviderConfig,
} from './config.js';
export { AUTHENTICATION, INTROSPECTION_WITHOUT_TOKEN, scopesOf, type AuthenticatedIdentity } from './identity.js';

/** The plugin's error codes (docs/errors.md); exported so its `ErrorCodes` augmentation reaches the published types. */
export { authenticationErrors } from './errors.js';

/** `useAuthentication(options)`: options as the `authentication` section. */
export const useAuthentication: PluginFactory<typeof authenticationConfigSchema> = definePlugin({
  name: 'authentication',
  config: authenticationSection,
  options: authenticationConfigSchema,
  errors: authenticationErrors,
  setup(ctx, options) {
    const { jwt } = options;
    const providers = jwt.jwks.map((entry) => new JwksProvider(entry, entry.algorithms ?? JWT_ALGORITHMS, ctx.log));
    // The first fetches run in the background: an identity provider that is down does not stop the router (its tokens get 401 until it answers).
    for (const provider of providers) void provider.start();
    const verifier = new TokenVerifier(providers, jwt.clock_skew);
    const headerName = jwt.header_name.toLowerCase();
    const prefix = jwt.header_value_prefix;
    const forwarded = Object.entries(options.forward_claims);
    const forwardedHeaders = forwarded.map(([, header]) => header);
    /** A request without a token: no claim header on its subscription's connection, whatever the header rules say. */
    const noClaims = Object.freeze(claimHeaders(undefined, forwarded));
    /** The claim headers of a verified token's identity (remembered tokens share one identity): worked out once, not per fetch. */
    const claimsOf = new WeakMap<AuthenticatedIdentity, Readonly<Record<string, string | undefined>>>();
    const identityClaims = (identity: AuthenticatedIdentity): Readonly<Record<string, string | undefined>> => {
      let claims = claimsOf.get(identity);
      if (!claims) claimsOf.set(identity, (claims = Object.freeze(claimHeaders(identity, forwarded))));
      return claims;
    };
    const outcomes = ctx.metrics.counter('authentication_tokens_total', 'Tokens presented, by result', ['result']);
    // Tokens are accepted up to `clock_skew` past their `exp` (verify-token.ts): a subscription ends when that acceptance would.
    const skewMs = Math.ceil(jwt.clock_skew / 1000) * 1000;
    const expired = tokenExpired();
    const authenticated = (event: StageEvent<'request'>, identity: AuthenticatedIdentity): void => {
      event.state.set(AUTHENTICATION, identity);
      outcomes.inc({ result: 'valid' });
      // A subscription's own subgraph connection is opened without the fetch stage: the claims go to it from here.
      if (forwarded.length > 0) addSubscriptionConnectionHeaders(event.state, identityClaims(identity));
      if (identity.expiresAt !== undefined) endStreamBy(event.state, identity.expiresAt * 1000 + skewMs, expired);
    };
    ctx.log.info(
      {
        providers: providers.map((p) => p.url),
        header_name: jwt.header_name,
        ...(forwarded.length > 0 ? { forward_claims: options.forward_claims } : {}),
        ...(options.ignore_introspection ? { ignore_introspection: true } : {}),
      },
      'JWT authentication enabled',
    );
    return {
      hooks: {
        onRequest(event) {
          if (forwardedHeaders.length > 0) dropClientClaimHeaders(event, forwardedHeaders);
          const value = event.input.headers[headerName];
          if (value === undefined) {
            if (options.ignore_introspection) event.state.set(INTROSPECTION_WITHOUT_TOKEN, true);
            if (forwarded.length > 0) addSubscriptionConnectionHeaders(event.state, noClaims);
            return;
          }
          const token = tokenOf(value, prefix);
          if (token === undefined) {
            outcomes.inc({ result: 'invalid' });
            event.respondWith(unauthenticated(`The ${jwt.header_name} header must be "${prefix === '' ? '' : `${prefix} `}<token>".`));
            return;
          }
          const known = verifier.remembered(token);
          if (known) {
            authenticated(event, known);
            return;
          }
          return verifier.verify(token).then(
            (identity) => authenticated(event, identity),
            (error: unknown) => {
              if (!(error instanceof TokenError)) throw error;
              outcomes.inc({ result: 'invalid' });
              event.log.debug({ reason: error.message }, 'token refused');
              event.respondWith(unauthenticated(`Invalid token: ${error.message}.`));
            },
          );
        },
        // Claims to subgraphs: set on every subgraph request of a request with a valid token; dropped otherwise, so a client cannot send them itself.
        ...(forwarded.length > 0
          ? {
              onFetch(event) {
                const input = event.input;
                const identity = event.state.get(AUTHENTICATION);
                const claims = identity === undefined ? noClaims : identityClaims(identity);
                let headers: Record<string, string> | undefined;
                for (const header in claims) {
                  const value = claims[header];
                  if (value === undefined ? input.headers[header] === undefined : input.headers[header] === value) continue;
                  const next: Record<string, string> = (headers ??= { ...input.headers });
                  if (value === undefined) delete next[header];
                  else next[header] = value;
                }
                if (headers) event.setInput({ ...input, headers });
              },
            }
          : {}),
      },
      stop() {
        for (const provider of providers) provider.stop();
      },
    };
  },
});

/**
 * The forwarded claims of an identity as headers (a claim the token lacks as
 * `undefined`: nothing else may fill its header, header rules included), or
 * of no identity (every claim header taken off).
 */
function claimHeaders(identity: AuthenticatedIdentity | undefined, forwarded: ReadonlyArray<readonly [string, string]>): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [claim, header] of forwarded) {
    const value = identity === undefined ? undefined : claimHeaderValue(identity.claims[claim]);
    // Two claims may share a header (`sub` and `uid` to x-user): one the token holds is not undone by one it lacks, as on fetches.
    if (value !== undefined || headers[header] === undefined) headers[header] = value;
  }
  return headers;
}

/**
 * Takes the headers that carry claims out of the client's request, so that no
 * path to a subgraph can pass a client's own `x-user-id` on (the fetch hook
 * sets them on subgraph requests, and the request hook on a subscription's own
 * subgraph connection; that connection is built from the header rules too).
 */
function dropClientClaimHeaders(event: StageEvent<'request'>, names: readonly string[]): void {
  const input = event.input;
  if (!names.some((name) => input.headers[name] !== undefined)) return;
  const headers = { ...input.headers };
  for (const name of names) delete headers[name];
  event.setInput({ ...input, headers });
}

/** The token in a header value: after the prefix and a space (the prefix compared case-insensitively, as HTTP auth schemes are). */
function tokenOf(value: string, prefix: string): string | undefined {
  const trimmed = value.trim();
  if (prefix === '') return trimmed === '' ? undefined : trimmed;
  if (trimmed.length <= prefix.length + 1 || trimmed[prefix.length] !== ' ') return undefined;
  if (trimmed.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()) return undefined;
  const token = trimmed.slice(prefix.length + 1).trim();
  return token === '' ? undefined : token;
}

/** How a subscription still running when its token expires ends (a stream has no status to answer). */
function tokenExpired(): RouterError {
  return new RouterError('UNAUTHENTICATED', 'The token has expired, so the subscription has ended; subscribe again with a new token.');
}

/** 401 `UNAUTHENTICATED`, with the `WWW-Authenticate` challenge of RFC 6750. */
export function unauthenticated(message: string): OperationResponse {
  return toErrorResponse(new RouterError('UNAUTHENTICATED', message, { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }));
}

/**
 * A claim as a header value: strings as they are, numbers and booleans
 * printed, arrays of those joined with `,`; undefined (not sent) for other
 * values, and for any value that is empty or not printable ASCII.
 */
export function claimHeaderValue(claim: unknown): string | undefined {
  let value: string;
  if (typeof claim === 'string') value = claim;
  else if (typeof claim === 'number' || typeof claim === 'boolean') value = String(claim);
  else if (Array.isArray(claim) && claim.length > 0 && claim.every((item) => ['string', 'number', 'boolean'].includes(typeof item))) value = claim.join(',');
  else return undefined;
  // Printable ASCII only: a control character would inject headers, and the HTTP client refuses other characters (the whole fetch would fail).
  return /^[\x20-\x7e]+$/.test(value) ? value : undefined;
}
