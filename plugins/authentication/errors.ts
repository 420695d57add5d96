/** Error codes of the `authentication` plugin, declared with the plugin (docs/errors.md lists them). */
import type { ErrorCatalogue } from '../../src/index.js';

export const authenticationErrors = {
  UNAUTHENTICATED: {
    status: 401,
    statusText: '401, `WWW-Authenticate: Bearer ...`',
    description:
      'The request carried a token that is not valid (malformed, expired, not yet valid, wrong issuer or audience, an algorithm outside the allow-list, no key of the configured JWKS verifies it, or the JWKS could not be fetched yet), a token header without the `Bearer ` prefix, or no token while `authorization.require_authentication` is on (unless the document is introspection only and `authentication.ignore_introspection` is on). The message gives the reason.',
    solution:
      'Send a fresh token from a configured identity provider as `Authorization: Bearer <token>`; check the router log (`JWKS fetch failed`) when valid tokens are refused.',
  },
} satisfies ErrorCatalogue;

declare module 'switchyard' {
  interface ErrorCodes extends Record<keyof typeof authenticationErrors, true> {}
}
