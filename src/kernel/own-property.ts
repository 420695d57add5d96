/**
 * Sets `target[key]` as an own, enumerable property. Plain assignment with
 * the key `__proto__` (a legal GraphQL variable name, alias or JSON key)
 * would replace the object's prototype instead, and the value would vanish
 * from its JSON.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
