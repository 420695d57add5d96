/** `Vary`, as answers from several owners (steps, plugins, compression) add to it. */

/** `Vary` with `added`'s entries appended, those it lists already (or all, with `*`) left out. */
export function mergeVary(current: string | undefined, added: string): string {
  if (!current) return added;
  const listed = new Set(current.split(',').map((entry) => entry.trim().toLowerCase()));
  if (listed.has('*')) return current;
  let merged = current;
  for (const entry of added.split(',')) {
    const name = entry.trim();
    if (name !== '' && !listed.has(name.toLowerCase())) {
      listed.add(name.toLowerCase());
      merged = `${merged}, ${name}`;
    }
  }
  return merged;
}
