import type { FetchAlias } from '../plan/query-plan.js';

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
    for (const [key, field] of Object.entries(object)) renamed[key === alias.alias ? alias.responseKey : key] = field;
    return renamed;
  }
  if (segment.startsWith('... on ')) {
    const typename = object.__typename;
    return typeof typename === 'string' && satisfies(typename, segment.slice(7)) ? restoreAt(value, alias, depth + 1, satisfies) : value;
  }
  const child = object[segment];
  const restored = restoreAt(child, alias, depth + 1, satisfies);
  return restored === child ? value : { ...object, [segment]: restored };
}
