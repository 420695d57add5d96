/**
 * Integers past 2^53 in a client's JSON. `JSON.parse` reads
 * 12345678901234567891 as the double 12345678901234567000 (and
 * 1000000000000000000000 as 1e21, which an ID would become "1e+21"): an
 * `ID` sent as a number (64-bit ids from Go, Java or Python clients) would
 * reach the subgraph as another id, and two ids that round alike would
 * share response-cache entries. So every JSON text a client sends is read
 * with `parseClientJson`: when the text holds a run of 16 digits and the
 * parsed value a number of magnitude 2^53 or more, it is read again with
 * lossless-json to find the integers `JSON.parse` does not give back as
 * written, whose text is kept beside the parsed value (the value itself is
 * JSON.parse's, unchanged). A number written as JavaScript writes it (a JS
 * client's 2 ** 60) is given back as written: nothing to keep.
 *
 * Once the operation's variable types are known, `exactVariables` puts the
 * text back where GraphQL allows it: an `ID` takes the digits as its
 * string, as ID input coercion would. A `Float` keeps the double (a float
 * is approximate by nature), and so does any value whose digits survived.
 * Anywhere else a value that lost digits (`Int` is refused by coercion
 * anyway, a custom scalar would pass the wrong number on, inside a JSON
 * scalar's object too) is refused with `BAD_USER_INPUT`, saying to send it
 * as a string.
 */
import {
  getNamedType,
  GraphQLError,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type VariableDefinitionNode,
} from 'graphql';
import { parse as parseLossless } from 'lossless-json';
import { setOwn } from '../own-property.js';

/** An integer literal that `JSON.parse` does not give back as written: it lost digits, or reads back in another form (1e+21). */
class ReshapedInteger {
  constructor(readonly text: string) {}
}

/** Exact texts of such integers, by the object or array holding them and their key or index. */
const exactTexts = new WeakMap<object, Map<string | number, string>>();
/** The objects and arrays that hold such an integer at any depth. */
const holdsExact = new WeakSet<object>();

const SIXTEEN_DIGITS = /\d{16}/;
const INTEGER = /^-?\d{16,}$/;
const TWO_TO_53 = 2 ** 53;

/** `JSON.parse` for a client's text, remembering integers past 2^53 as written. Throws as `JSON.parse` does. */
export function parseClientJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  // Both checks are cheap and linear; the second keeps a text whose long digit runs are all in strings (hashes, ids) from a second parse.
  if (typeof value === 'object' && value !== null && SIXTEEN_DIGITS.test(text) && holdsLargeNumber(value)) recordExactIntegers(text, value);
  return value;
}

/** Whether a parsed value holds a number of magnitude 2^53 or more anywhere (one walk, explicit stack). */
function holdsLargeNumber(value: object): boolean {
  const pending: object[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const child of Array.isArray(next) ? next : Object.values(next)) {
      if (typeof child === 'number') {
        if (child >= TWO_TO_53 || child <= -TWO_TO_53) return true;
      } else if (typeof child === 'object' && child !== null) pending.push(child);
    }
  }
  return false;
}

/** lossless-json's number reader: a marker for an integer `JSON.parse` does not give back as written, 0 for any other (its value is unused; lossless-json takes null for none). */
function readNumber(text: string): ReshapedInteger | 0 {
  if (!INTEGER.test(text)) return 0;
  const rounded = Number(text);
  // Past ±1.8e308 the number is Infinity, refused as such by variable coercion; finite, the text is at most 309 digits.
  // Written as JavaScript writes that double (a JS client's 2 ** 60): nothing was lost, nothing to keep.
  if (!Number.isFinite(rounded) || String(rounded) === text) return 0;
  return new ReshapedInteger(text);
}

/** Whether the integer written as `text` is not the double `value` (digits lost, not only written otherwise). */
function lostDigits(text: string, value: number): boolean {
  return BigInt(text) !== BigInt(value);
}

interface Pair {
  readonly exact: object;
  readonly value: object;
  readonly parent: Pair | undefined;
}

function recordExactIntegers(text: string, value: object): void {
  let exact: unknown;
  try {
    // A key written twice: the last value, as JSON.parse keeps it.
    exact = parseLossless(text, null, { parseNumber: readNumber, onDuplicateKey: ({ newValue }) => newValue });
  } catch {
    // Nesting past lossless-json's stack (it recurses): read as JSON.parse read it.
    return;
  }
  if (typeof exact !== 'object' || exact === null) return;
  // Both trees have the same shape; walked side by side with an explicit stack (client JSON may nest deeply).
  const pending: Pair[] = [{ exact, value, parent: undefined }];
  for (let pair = pending.pop(); pair !== undefined; pair = pending.pop()) {
    const keys: (string | number)[] = Array.isArray(pair.exact) ? pair.exact.map((_, index) => index) : Object.keys(pair.exact);
    for (const key of keys) {
      const exactChild = (pair.exact as Record<string | number, unknown>)[key];
      const child = (pair.value as Record<string | number, unknown>)[key];
      if (exactChild instanceof ReshapedInteger) {
        if (typeof child !== 'number') continue;
        let texts = exactTexts.get(pair.value);
        if (!texts) exactTexts.set(pair.value, (texts = new Map()));
        texts.set(key, exactChild.text);
        for (let holder: Pair | undefined = pair; holder && !holdsExact.has(holder.value); holder = holder.parent) holdsExact.add(holder.value);
      } else if (typeof exactChild === 'object' && exactChild !== null && typeof child === 'object' && child !== null) {
        pending.push({ exact: exactChild, value: child, parent: pair });
      }
    }
  }
}

/** The exact text of the integer `holder[key]`, if it was written otherwise than `value` reads (and still is that number). */
function exactTextAt(holder: object, key: string | number, value: number): string | undefined {
  const text = exactTexts.get(holder)?.get(key);
  // A plugin may have changed the value in place since: the text is the client's only while the value is still its number.
  return text !== undefined && Number(text) === value ? text : undefined;
}

/** The variables with exact ids put back, or the error refusing an integer that would reach a subgraph with other digits. */
export type ExactVariables = { readonly variables: Readonly<Record<string, unknown>> | undefined; readonly error?: undefined } | { readonly error: GraphQLError };

/**
 * Puts back the exact digits of `ID` values and refuses other non-`Float`
 * values that lost digits. The same object when nothing did (the common
 * case costs a set lookup or two). `sent` is the variables object the
 * client's JSON gave, when request hooks replaced it with a copy (adding a
 * variable): its values that the copy kept are read from it. Call after
 * variable coercion, which bounds how deep the values nest.
 */
export function exactVariables(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  variables: Readonly<Record<string, unknown>> | undefined,
  sent?: Readonly<Record<string, unknown>>,
): ExactVariables {
  if (variables === undefined || !(holdsExact.has(variables) || (sent !== undefined && sent !== variables && holdsExact.has(sent)))) return { variables };
  let out: Record<string, unknown> | undefined;
  for (const definition of definitions) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type || !Object.hasOwn(variables, name)) continue;
    const value = variables[name];
    // Read from the object the client sent when the value is the one it sent (a hook copied the variables around it).
    const holder = exactTexts.get(variables)?.has(name) || sent === undefined || !Object.hasOwn(sent, name) || sent[name] !== value ? variables : sent;
    const fixed = exactValue(value, type, holder, name, { variable: name, parent: undefined, step: undefined });
    if (fixed instanceof GraphQLError) return { error: fixed };
    if (fixed !== value) setOwn((out ??= { ...variables }), name, fixed);
  }
  return { variables: out ?? variables };
}

/** Where a value is inside its variable, as a chain to the root (built into a path only for an error). */
interface Where {
  readonly variable: string;
  readonly parent: Where | undefined;
  readonly step: string | number | undefined;
}

function exactValue(value: unknown, type: GraphQLInputType, holder: object, key: string | number, where: Where): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (typeof value === 'object' && value !== null) {
    if (!holdsExact.has(value)) return value;
    if (isListType(inner)) {
      // A single value where a list is declared is coerced as a list of one: its item type decides.
      if (!Array.isArray(value)) return exactValue(value, inner.ofType, holder, key, where);
      let out: unknown[] | undefined;
      for (let index = 0; index < value.length; index += 1) {
        const fixed = exactValue(value[index], inner.ofType, value, index, { variable: where.variable, parent: where, step: index });
        if (fixed instanceof GraphQLError) return fixed;
        if (fixed !== value[index]) (out ??= value.slice())[index] = fixed;
      }
      return out ?? value;
    }
    if (isInputObjectType(inner)) {
      if (Array.isArray(value)) return value;
      let out: Record<string, unknown> | undefined;
      const object = value as Record<string, unknown>;
      for (const [field, definition] of Object.entries(inner.getFields())) {
        if (!Object.hasOwn(object, field)) continue;
        const fixed = exactValue(object[field], definition.type, object, field, { variable: where.variable, parent: where, step: field });
        if (fixed instanceof GraphQLError) return fixed;
        if (fixed !== object[field]) setOwn((out ??= { ...object }), field, fixed);
      }
      return out ?? value;
    }
    // An object or list a custom scalar takes as it is (a JSON scalar): nothing in it may have lost digits.
    const lost = lostText(value);
    return lost === undefined ? value : losingDigits(where, lost);
  }
  if (typeof value !== 'number') return value;
  const text = exactTextAt(holder, key, value);
  if (text === undefined) return value;
  const named = getNamedType(inner);
  if (named.name === 'ID') return text;
  if (named.name === 'Float' || !lostDigits(text, value)) return value;
  return losingDigits(where, text);
}

function losingDigits(where: Where, text: string): GraphQLError {
  let path = '';
  for (let at: Where | undefined = where; at?.step !== undefined; at = at.parent) path = (typeof at.step === 'number' ? `[${at.step}]` : `.${at.step}`) + path;
  return new GraphQLError(
    `Variable "$${where.variable}" holds the integer ${text}${path === '' ? '' : ` (at $${where.variable}${path})`}, which a JSON number cannot carry exactly past 2^53: the router would pass on other digits. Send it as a string.`,
    { extensions: { code: 'BAD_USER_INPUT' } },
  );
}

/** The text of an integer that lost digits inside a value known to hold a reshaped one, if any did. */
function lostText(value: object): string | undefined {
  const pending: object[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const texts = exactTexts.get(next);
    if (texts) {
      for (const [key, text] of texts) {
        const current = (next as Record<string | number, unknown>)[key];
        if (typeof current === 'number' && Number(text) === current && lostDigits(text, current)) return text;
      }
    }
    for (const child of Array.isArray(next) ? next : Object.values(next)) if (typeof child === 'object' && child !== null && holdsExact.has(child)) pending.push(child);
  }
  return undefined;
}
