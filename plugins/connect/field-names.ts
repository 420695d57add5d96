/**
 * Matching proto field names to GraphQL names. The generator turns
 * `createdAt` into `created_at` (and `userID` into `user_id`); comparing
 * names without underscores and case finds the GraphQL name again without
 * depending on the exact snake_case rules of a generator version.
 */

/** `created_at`, `createdAt` and `CreatedAt` all give `createdat`. */
export function matchKey(name: string): string {
  return name.replace(/_/g, '').toLowerCase();
}

/**
 * Proto enum value name -> GraphQL enum value name: `PROJECT_STATUS_ACTIVE`
 * -> `ACTIVE` for `enum ProjectStatus`, matching the part after the common
 * prefix (the `..._UNSPECIFIED` value's) against the GraphQL values.
 */
export function enumValueMatcher(protoValues: readonly string[], graphqlValues: readonly string[]): Map<string, string> {
  const unspecified = protoValues.find((name) => name.endsWith('_UNSPECIFIED'));
  const prefix = unspecified === undefined ? '' : unspecified.slice(0, -'UNSPECIFIED'.length);
  const byKey = new Map(graphqlValues.map((value) => [matchKey(value), value]));
  const matched = new Map<string, string>();
  for (const name of protoValues) {
    if (name === unspecified) continue;
    const graphql = byKey.get(matchKey(name.startsWith(prefix) ? name.slice(prefix.length) : name));
    if (graphql !== undefined) matched.set(name, graphql);
  }
  return matched;
}
