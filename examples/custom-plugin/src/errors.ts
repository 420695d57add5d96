/**
 * The plugin's error code. Declared twice, each for its reader: the object
 * goes to `definePlugin({ errors })`, so the router knows the code's status
 * at run time; the interface below tells the compiler that `RATE_LIMITED` is
 * a code (`new RouterError('RATE_LIMITED')` compiles, a typo does not).
 */
import type { ErrorCatalogue } from 'switchyard';

export const clientRateLimitErrors = {
  RATE_LIMITED: {
    status: 429,
    description: 'The client sent more than its limit in the window. `extensions.retryAfter` (and `Retry-After`) say when to try again.',
    solution: "Slow down, or raise the client's limit in `clients`.",
  },
} satisfies ErrorCatalogue;

declare module 'switchyard' {
  interface ErrorCodes {
    RATE_LIMITED: true;
  }
}
