/**
 * The Cache-Control of the router's own answer: merged from every subgraph
 * answer (fetched or served from the cache), the most restrictive winning.
 */

/** How cacheable one part of the answer is. */
export type AnswerPart =
  | {
      readonly cacheable: true;
      /** Remaining lifetime in milliseconds. */
      readonly ttlMs: number;
      readonly isPublic: boolean;
    }
  | { readonly cacheable: false };

/** A part that allows no caching (no-store, private, errors, mutations, no header). */
export const UNCACHEABLE: AnswerPart = { cacheable: false };

/**
 * Any uncacheable part or any error gives `no-store`; otherwise the smallest
 * lifetime, `public` only when every part was public, and `private` instead
 * when the router made the answer depend on the caller (`privateAnswer`:
 * authorization). Undefined when no subgraph was asked (nothing to say).
 */
export function mergeCacheControl(parts: readonly AnswerPart[], hasErrors: boolean, callerDependent = false): string | undefined {
  if (parts.length === 0) return undefined;
  const merged = hasErrors ? UNCACHEABLE : combineParts(parts);
  if (!merged.cacheable) return 'no-store';
  const seconds = Math.floor(merged.ttlMs / 1000);
  if (seconds <= 0) return 'no-store';
  if (callerDependent) return `private, max-age=${seconds}`;
  return merged.isPublic ? `public, max-age=${seconds}` : `max-age=${seconds}`;
}

/** The most restrictive of several parts (the entities of one batch). */
export function combineParts(parts: readonly AnswerPart[]): AnswerPart {
  let ttlMs = Number.POSITIVE_INFINITY;
  let isPublic = true;
  for (const part of parts) {
    if (!part.cacheable) return UNCACHEABLE;
    ttlMs = Math.min(ttlMs, part.ttlMs);
    isPublic &&= part.isPublic;
  }
  return Number.isFinite(ttlMs) ? { cacheable: true, ttlMs, isPublic } : UNCACHEABLE;
}
