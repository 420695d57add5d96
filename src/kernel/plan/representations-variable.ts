/**
 * The name of the variable holding an entity fetch's representations. It is
 * `representations`, unless the client variables the fetch sends already
 * include one of that name: then `_` is appended until the name is clear
 * (as the batched calls' `$r0` becomes `$r0_`), so the client's variable
 * keeps its value and the subgraph sees no duplicate declaration. A router
 * reserves no client variable name.
 */
export const REPRESENTATIONS_VARIABLE = 'representations';

/** The representations variable of an entity fetch sending these client variables. */
export function representationsVariableFor(clientVariables: Iterable<string>): string {
  const taken = new Set(clientVariables);
  let name = REPRESENTATIONS_VARIABLE;
  while (taken.has(name)) name += '_';
  return name;
}

/** The representations variable of a fetch node, request or batched part (absent: the usual name). */
export function representationsVariableOf(fetch: { readonly representationsVariable?: string }): string {
  return fetch.representationsVariable ?? REPRESENTATIONS_VARIABLE;
}
