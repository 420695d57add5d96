/**
 * Reads over the parts of one response object, for compiled code: the
 * object a fetch returned first, and `more`, what later fetches returned for
 * it. They give what `firstValue` and `childValues` (response-tree.ts) give
 * over a view, without building the view. Each is written into the
 * generated code for one known key: with the key as a literal, every read is
 * a named property load the engine caches per site, where a shared helper
 * taking the key at run time would make each read a slow, shape-generic
 * lookup. `keyLiteral` is a JSON string literal; the names `j`, `c` and `n`
 * must be free where the code goes.
 */

/**
 * Keys every plain object seems to hold (Object.prototype's members, such as
 * a client's alias `constructor`): compiled code leaves them to the general
 * code, which reads them with `ownField` (response-tree.ts).
 */
export const INHERITED_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** Two parts hold a composite value for one key: the general code merges them. */
export const MULTI = Symbol('several-values');

/**
 * A leaf's value when the first object had none: assigns to `target` (which
 * holds the first object's value) the first non-null value of the other
 * parts, else null if one of them said null.
 */
export function firstFromSource(target: string, more: string, keyLiteral: string): string {
  return `for (let j = 0; j < ${more}.length; j++) { const c = ${more}[j][${keyLiteral}]; if (c !== undefined && c !== null) { ${target} = c; break; } if (c === null) ${target} = null; }`;
}

/**
 * A composite field's value when the object has several parts, assigned to
 * `target`: the one non-null value among the parts, null when only nulls,
 * undefined when none; MULTI when two parts hold one (merged by the general
 * code).
 */
export function oneOfSource(target: string, object: string, more: string, keyLiteral: string): string {
  return `{ ${target} = ${object}[${keyLiteral}]; let n = ${target} === null; if (n) ${target} = undefined;
    for (let j = 0; j < ${more}.length; j++) { const c = ${more}[j][${keyLiteral}]; if (c === undefined) continue; if (c === null) n = true; else if (${target} !== undefined) { ${target} = MULTI; break; } else ${target} = c; }
    if (${target} === undefined && n) ${target} = null; }`;
}
