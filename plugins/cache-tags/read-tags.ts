import type { SubgraphRequest, SubgraphResponse } from '../../src/index.js';
import type { FetchCacheTags } from './request-cache-tags.js';

/** What reading a response's tag extension found. */
export type TagReading =
  | { readonly ok: true; readonly tags: FetchCacheTags }
  /** `reason` says why the declaration was dropped; undefined when there was none. */
  | { readonly ok: false; readonly reason: string | undefined };

const NONE: TagReading = { ok: false, reason: undefined };

/**
 * Reads `extensions.cacheTags` (root fetches: a flat list of strings) or
 * `extensions.entityCacheTags` (entity fetches: one list per entity, in
 * `_entities` order; for a batched call, every part's entities in the
 * order of its parts). A malformed declaration, or an outer list whose
 * length differs from the number of entities, drops every tag of the
 * response.
 */
export function readCacheTags(request: SubgraphRequest, response: SubgraphResponse): TagReading {
  const extensions = response.extensions;
  if (!extensions) return NONE;
  if (request.kind === 'root') {
    const declared = extensions.cacheTags;
    if (declared === undefined) return NONE;
    if (!isStringList(declared)) return { ok: false, reason: '"cacheTags" must be a list of strings' };
    return { ok: true, tags: { kind: 'root', tags: declared } };
  }
  const declared = extensions.entityCacheTags;
  if (declared === undefined) return NONE;
  if (!Array.isArray(declared) || !declared.every(isStringList)) {
    return { ok: false, reason: '"entityCacheTags" must be a list of lists of strings' };
  }
  // A batched call (aliased `_entities` parts): one list per entity of every part, parts in order.
  const lists = request.parts ? request.parts.map((part) => response.data?.[part.alias]) : [response.data?._entities];
  const count = lists.reduce((sum: number, entities) => sum + (Array.isArray(entities) ? entities.length : 0), 0);
  if (declared.length !== count) {
    return { ok: false, reason: `"entityCacheTags" has ${declared.length} lists for ${count} entities` };
  }
  return { ok: true, tags: { kind: 'entity', entities: declared } };
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
