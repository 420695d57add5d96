/**
 * The proto service name of `grpc-service generate <name>`: the argument in
 * PascalCase, as `wgc grpc-service generate` makes it (lodash's
 * `upperFirst(camelCase(name))`): `Service` -> `Service`, `service.v1` ->
 * `ServiceV1`, `projects-service` -> `ProjectsService`, `myAPIService` ->
 * `MyApiService`.
 */

/** Input with humps, digit/letter seams or punctuation is split into words finely; plain words are not. */
const NEEDS_FINE_SPLIT = /[a-z][A-Z]|[A-Z]{2}[a-z]|[0-9][a-zA-Z]|[a-zA-Z][0-9]|[^a-zA-Z0-9 ]/;
const PLAIN_WORDS = /[A-Za-z0-9]+/g;
/**
 * lodash's word pattern restricted to ASCII, in its order: a capitalised or
 * lower-case word, an upper-case run (stopping before the capital of the
 * next word), ordinals (`1st`, `2ND`), digit runs.
 */
const FINE_WORDS = new RegExp(
  [
    '[A-Z]?[a-z]+(?=[^A-Za-z0-9]|[A-Z]|$)',
    '[A-Z]+(?=[^A-Za-z0-9]|[A-Z][a-z]|$)',
    '[A-Z]?[a-z]+',
    '[A-Z]+',
    '\\d*(?:1ST|2ND|3RD|(?![123])\\dTH)(?=\\b|[a-z_])',
    '\\d*(?:1st|2nd|3rd|(?![123])\\dth)(?=\\b|[A-Z_])',
    '\\d+',
  ].join('|'),
  'g',
);

function wordsOf(name: string): string[] {
  const text = name.replace(/['\u2019]/g, '');
  return text.match(NEEDS_FINE_SPLIT.test(text) ? FINE_WORDS : PLAIN_WORDS) ?? [];
}

/** The service name wgc gives for `name`; `undefined` when it would not be a proto identifier (no letters, or a leading digit). */
export function serviceNameFromArgument(name: string): string | undefined {
  const pascal = wordsOf(name)
    .map((word) => word[0]!.toUpperCase() + word.slice(1).toLowerCase())
    .join('');
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(pascal)) return undefined;
  return pascal;
}
