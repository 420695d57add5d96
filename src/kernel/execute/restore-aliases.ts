import { setOwn } from '../own-property.js';
import type { FetchAlias } from '../plan/query-plan.js';
import { MAX_NESTING } from '../router/document-scan.js';

/**
 * Renames fields the planner sent under an alias back to the client's
 * response key. Copies along the way: fetched objects may be shared.
 */
export function restoreAliases(value: unknown, aliases: readonly FetchAlias[], satisfies: (typename: string, condition: string) => boolean): unknown {
  // Shallow paths first: deeper aliases are written with the client's keys of their ancestors.
  const ordered = [...aliases].sort((a, b) => a.path.length - b.path.length);
  let result = value;
  for (const alias of ordered) result = restoreAt(result, alias, 0, satisfies);
  return result;
}

function restoreAt(value: unknown, alias: FetchAlias, depth: number, satisfies: (typename: string, condition: string) => boolean): unknown {
  if (value === null || typeof value !== 'object') return value;
  const segment = alias.path[depth];
  if (Array.isArray(value)) {
    if (segment !== '@') return value;
    let changed = false;
    const items = value.map((item) => {
      const restored = restoreAt(item, alias, depth + 1, satisfies);
      if (restored !== item) changed = true;
      return restored;
    });
    return changed ? items : value;
  }
  const object = value as Record<string, unknown>;
  if (segment === undefined) {
    if (!(alias.alias in object)) return value;
    const renamed: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(object)) {
      const target = key === alias.alias ? alias.responseKey : key;
      // The client's key may hold the field already, from a sibling fragment's copy (`rel { id }` beside
      // `... on Product { rel__sy_0: rel { name } }`): one field for the client, so the two copies merge.
      setOwn(renamed, target, Object.hasOwn(renamed, target) ? mergeCopies(renamed[target], field, 0) : field);
    }
    return renamed;
  }
  if (segment.startsWith('... on ')) {
    const typename = object.__typename;
    return typeof typename === 'string' && satisfies(typename, segment.slice(7)) ? restoreAt(value, alias, depth + 1, satisfies) : value;
  }
  const child = Object.hasOwn(object, segment) ? object[segment] : undefined;
  const restored = restoreAt(child, alias, depth + 1, satisfies);
  return restored === child ? value : { ...object, [segment]: restored };
}

/**
 * Two copies of one field fetched under different keys, as one: objects
 * field by field, lists item by item; otherwise the first copy's value.
 * Only as deep as a document may select (deeper is no field the client asked).
 */
function mergeCopies(first: unknown, second: unknown, depth: number): unknown {
  if (depth >= MAX_NESTING || first === null || second === null || typeof first !== 'object' || typeof second !== 'object') return first === undefined ? second : first;
  if (Array.isArray(first) || Array.isArray(second)) {
    if (!Array.isArray(first) || !Array.isArray(second) || first.length !== second.length) return first;
    return first.map((item, i) => mergeCopies(item, second[i], depth + 1));
  }
  const merged: Record<string, unknown> = { ...(first as Record<string, unknown>) };
  for (const [key, value] of Object.entries(second as Record<string, unknown>)) {
    setOwn(merged, key, Object.hasOwn(merged, key) ? mergeCopies(merged[key], value, depth + 1) : value);
  }
  return merged;
}
