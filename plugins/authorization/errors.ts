/** Error codes of the `authorization` plugin, declared with the plugin (docs/errors.md lists them). */
import type { ErrorCatalogue } from '../../src/index.js';

export const authorizationErrors = {
  UNAUTHORIZED_FIELD_OR_TYPE: {
    status: 403,
    statusText: '200 with partial data; 403 with `authorization.reject_operation_if_unauthorized`, and for a subscription whose root field is refused',
    description:
      "A field, or the type it returns, is under `@authenticated`, `@requiresScopes` or `@policy` and the caller's token does not satisfy it. The field was not fetched; it is `null` at the error's `path` (a non-null field nulls its parent). In reject mode the message lists the fields (`Type.field`).",
    solution: 'Send a token with the scopes the schema asks for, or leave the field out of the operation.',
  },
} satisfies ErrorCatalogue;

declare module 'switchyard' {
  interface ErrorCodes extends Record<keyof typeof authorizationErrors, true> {}
}
