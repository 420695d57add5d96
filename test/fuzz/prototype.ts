/**
 * Prototype pollution probes for fuzz tests: keys that pollute when a JSON
 * object is merged or assigned carelessly, and a check that nothing did.
 */
import fc from 'fast-check';
import { expect } from 'vitest';

/** Keys that reach `Object.prototype` through a careless merge (`__proto__`, `constructor.prototype`). */
export const pollutingKeys = fc.constantFrom('__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty', 'toString');

/** A JSON text whose object keys try every route to `Object.prototype`, each setting `polluted`. */
export const POLLUTING_OBJECT = '{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "prototype": {"polluted": "yes"}}';

/** Fails when any probe above reached a plain object, an array or a function. */
export function expectPrototypeUntouched(): void {
  const probes: Array<Record<string, unknown>> = [{}, [] as unknown as Record<string, unknown>, Object.create(Object.prototype) as Record<string, unknown>];
  for (const probe of probes) expect(probe.polluted).toBeUndefined();
  expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
  expect(typeof ({} as { toString: unknown }).toString).toBe('function');
}
