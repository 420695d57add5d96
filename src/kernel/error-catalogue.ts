/**
 * Error codes as data: each code is declared once with its default HTTP
 * status and the text docs/errors.md shows for it (`npm run docs:errors`
 * writes the tables). The router's own codes are in kernel-errors.ts; a
 * plugin brings its own through `definePlugin({ errors })`, which registers
 * them here, and names them for the compiler by augmenting `ErrorCodes`.
 */
import { kernelErrors } from './kernel-errors.js';

/** What the router knows about one error code. */
export interface ErrorSpec {
  /** HTTP status of the answer when this error ends a request and the code raising it names none. Default: none, and such an answer is a 500. */
  readonly status?: number;
  /** The status column of docs/errors.md where the number alone would mislead (`200 with partial data`, `log only`). Default: `status`, or `—`. */
  readonly statusText?: string;
  /** What happened, as docs/errors.md describes it (Markdown, one paragraph). */
  readonly description: string;
  /** What the user does about it (Markdown, one paragraph). Default: none. */
  readonly solution?: string;
  /** Message of a `RouterError` raised without one. Default: the code. */
  readonly message?: string;
}

/** Error codes and what they mean: the shape of `definePlugin({ errors })`. */
export type ErrorCatalogue = Readonly<Record<string, ErrorSpec>>;

/** A registered code: its spec and who declared it (`kernel` or a plugin's name). */
export interface RegisteredError extends ErrorSpec {
  readonly code: string;
  readonly owner: string;
}

/** Codes are what clients match on: upper snake case, as GraphQL servers write them. */
const CODE_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

const registered = new Map<string, RegisteredError>();
for (const [code, spec] of Object.entries(kernelErrors as ErrorCatalogue)) registered.set(code, { ...spec, code, owner: 'kernel' });

/** The spec of `code`, once the kernel or a plugin has declared it. */
export function errorSpec(code: string): RegisteredError | undefined {
  return registered.get(code);
}

/** Every declared code, the kernel's first, then in the order plugins were defined. */
export function registeredErrors(): readonly RegisteredError[] {
  return [...registered.values()];
}

/** Why a declaration was refused: a malformed one (`PLUGIN_ERROR`) or a clash with another owner's (`PLUGIN_DUPLICATE`). */
export interface RefusedErrors {
  readonly code: 'PLUGIN_ERROR' | 'PLUGIN_DUPLICATE';
  readonly message: string;
}

/**
 * Declares `owner`'s codes, all or none. Refuses a malformed name or status,
 * and a code another owner declared with another status (what the code
 * means to clients). Declaring a known code again with the same status (a
 * module loaded twice, a plugin raising a router code or another plugin's,
 * say its own `UNAUTHENTICATED`) is fine: the first declaration's text stays.
 */
export function registerErrors(owner: string, catalogue: ErrorCatalogue): RefusedErrors | undefined {
  const malformed = (message: string): RefusedErrors => ({ code: 'PLUGIN_ERROR', message });
  if (typeof catalogue !== 'object' || catalogue === null) return malformed('errors must be an object of error codes');
  for (const [code, spec] of Object.entries(catalogue)) {
    if (!CODE_NAME.test(code)) return malformed(`error code "${code}" must be upper snake case (A-Z, 0-9, _)`);
    if (typeof spec?.description !== 'string' || spec.description === '') return malformed(`error code "${code}" needs a description`);
    if (spec.status !== undefined && !(Number.isInteger(spec.status) && spec.status >= 100 && spec.status <= 599)) {
      return malformed(`error code "${code}" has status ${String(spec.status)}; expected an HTTP status (100-599)`);
    }
    const known = registered.get(code);
    if (known && known.status !== spec.status) {
      const by = known.owner === 'kernel' ? 'the router' : `plugin "${known.owner}"`;
      const status = (value: number | undefined) => (value === undefined ? 'no status' : `status ${value}`);
      return {
        code: 'PLUGIN_DUPLICATE',
        message: `error code "${code}" is already declared by ${by} with ${status(known.status)}, not ${status(spec.status)}; raise it with that status or name a code of your own`,
      };
    }
  }
  for (const [code, spec] of Object.entries(catalogue)) {
    if (!registered.has(code)) registered.set(code, { ...spec, code, owner });
  }
  return undefined;
}
