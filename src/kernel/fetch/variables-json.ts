import { memoOn } from '../object-memo.js';

/** Where a variables object keeps its JSON text. */
const TEXT = Symbol('switchyard.variablesJson');

/**
 * The JSON text of a subgraph request's variables, made once per variables
 * object: the single-flight key and the request body both need it, and for
 * entity fetches it holds every representation.
 */
export function variablesJson(variables: Readonly<Record<string, unknown>>): string {
  return memoOn(variables, TEXT, () => JSON.stringify(variables));
}
