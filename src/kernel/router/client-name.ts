/**
 * The client's name, from `graphql-client-name` or, when that is absent or
 * empty, Apollo's `apollographql-client-name` (the order Cosmo Router uses).
 * `headers` has lower-case names.
 */
export function clientNameOf(headers: Readonly<Record<string, string | undefined>>): string | undefined {
  const name = headers['graphql-client-name'];
  if (name !== undefined && name !== '') return name;
  const apollo = headers['apollographql-client-name'];
  return apollo !== undefined && apollo !== '' ? apollo : undefined;
}
