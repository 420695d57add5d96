/**
 * A value derived from an object, kept on the object itself under a symbol
 * key (non-enumerable: JSON, spreads and `Object.keys` do not see it). It
 * lives exactly as long as the object, as with a WeakMap, but costs the
 * garbage collector nothing extra: per-request objects that die young would
 * otherwise fill weak tables, which every collection has to walk.
 * Frozen or sealed objects get the value computed each time.
 */
export function memoOn<T>(object: object, key: symbol, make: () => T): T {
  const known = (object as Record<symbol, T | undefined>)[key];
  if (known !== undefined) return known;
  const value = make();
  if (Object.isExtensible(object)) Object.defineProperty(object, key, { value, enumerable: false });
  return value;
}
