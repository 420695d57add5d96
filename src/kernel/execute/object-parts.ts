import type { JsonObject } from './response-tree.js';

/**
 * Reads over the parts of one response object, for compiled code: the
 * object a fetch returned first, and `more`, what later fetches returned for
 * it. They give what `firstValue` and `childValues` (response-tree.ts) give
 * over a view, without building the view.
 */

/** Two parts hold a composite value for one key: the general code merges them. */
export const MULTI = Symbol('several-values');

/** A leaf's value when the first object had none: the first non-null one of the other parts, else null if one said null. */
export function firstFrom(value: unknown, more: readonly JsonObject[], key: string): unknown {
  let found = value;
  for (let i = 0; i < more.length; i++) {
    const candidate = more[i]![key];
    if (candidate !== undefined && candidate !== null) return candidate;
    if (candidate === null) found = null;
  }
  return found;
}

/** A composite field's value when the object has several parts; MULTI when two parts hold one (merged by the general shaper). */
export function oneOf(object: JsonObject, more: readonly JsonObject[], key: string): unknown {
  let value = object[key];
  let sawNull = value === null;
  if (value === null) value = undefined;
  for (let i = 0; i < more.length; i++) {
    const candidate = more[i]![key];
    if (candidate === undefined) continue;
    if (candidate === null) sawNull = true;
    else if (value !== undefined) return MULTI;
    else value = candidate;
  }
  return value !== undefined ? value : sawNull ? null : undefined;
}
