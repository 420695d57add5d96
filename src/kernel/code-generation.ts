/**
 * Generated JavaScript, one policy for the kernel and for plugins. Code is
 * compiled from strings (`new Function`) only where the process allows it:
 * under `node --disallow-code-generation-from-strings` (or an embedder
 * that forbids it) V8 throws an EvalError instead. The decision is made
 * once per process, and where code cannot be generated every user runs its
 * general, interpreted code, which gives the same answers: generated code
 * is only ever a faster way to an answer the general code defines.
 */

/** Whether this process compiles generated code; undefined until first asked. */
let allowed: boolean | undefined;

/**
 * Whether this process may compile generated code: false under
 * `--disallow-code-generation-from-strings`. Decided on first call (by
 * compiling an empty function) and fixed for the life of the process, so
 * callers may skip preparing source they could not compile.
 */
export function codeGenerationAllowed(): boolean {
  if (allowed === undefined) {
    try {
      new Function('');
      allowed = true;
    } catch (error) {
      if (!(error instanceof EvalError)) throw error;
      allowed = false;
    }
  }
  return allowed;
}

/**
 * Compiles generated source into a function, or answers undefined when
 * this process does not compile generated code (`codeGenerationAllowed`);
 * the caller then runs its general code instead. `body` is a function
 * body that receives `helpers` as `H` and returns the result. It must be
 * the caller's own text: names from a schema, an operation or a proto
 * enter it only as JSON string literals, never as code.
 */
export function compileGenerated<Helpers, Result>(body: string, helpers: Helpers): Result | undefined {
  if (!codeGenerationAllowed()) return undefined;
  let factory: (helpers: Helpers) => Result;
  try {
    factory = new Function('H', body) as (helpers: Helpers) => Result;
  } catch (error) {
    // Forbidden after the first check (a flag set at run time): decided now for good.
    if (!(error instanceof EvalError)) throw error;
    allowed = false;
    return undefined;
  }
  return factory(helpers);
}
