/**
 * The JSON text of a subgraph request's variables, made once per variables
 * object: the single-flight key and the request body both need it, and for
 * entity fetches it holds every representation.
 */
const texts = new WeakMap<object, string>();

export function variablesJson(variables: Readonly<Record<string, unknown>>): string {
  let text = texts.get(variables);
  if (text === undefined) {
    text = JSON.stringify(variables);
    texts.set(variables, text);
  }
  return text;
}
