/**
 * Error codes of the `persisted-operations` plugin, declared with the plugin
 * (docs/errors.md lists them). The `PERSISTED_QUERY_*` codes of the request
 * protocol it shares with `automatic-persisted-queries` are the router's
 * (`switchyard/operations`).
 */
import type { ErrorCatalogue } from '../../src/index.js';

export const persistedOperationsErrors = {
  QUERY_NOT_IN_SAFELIST: {
    status: 403,
    description: '`persisted_operations.safelist` is on and the operation text is not a registered operation, even after normalization (whitespace, commas, comments).',
    solution: 'Register the operation with `switchyard operations push`, or send it by hash.',
  },
} satisfies ErrorCatalogue;

declare module 'switchyard' {
  interface ErrorCodes extends Record<keyof typeof persistedOperationsErrors, true> {}
}
