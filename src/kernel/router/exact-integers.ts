/**
 * Integers past 2^53 in a client's JSON. `JSON.parse` reads
 * 12345678901234567891 as the double 12345678901234567000: an `ID` sent as
 * a number (64-bit ids from Go, Java or Python clients) would reach the
 * subgraph as another id, and two ids that round alike would share
 * response-cache entries. So every JSON text a client sends is read with
 * `parseClientJson`: when the text holds a run of 16 digits (every integer
 * that loses digits has at least 16), it is read again with lossless-json
 * to find the integers that did, whose exact text is kept beside the
 * parsed value (the value itself is JSON.parse's, unchanged).
 *
 * Once the operation's variable types are known, `exactVariables` puts the
 * exact text back where GraphQL allows it: an `ID` takes the digits as its
 * string, as ID input coercion would. A `Float` keeps the rounded number (a
 * float is approximate by nature). Anywhere else (`Int` is refused by
 * coercion anyway, a custom scalar would pass the wrong number on, inside a
 * JSON scalar's object too) the request is refused with `BAD_USER_INPUT`,
 * saying to send it as a string.
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

/** An integer literal a double cannot hold exactly. */
class LosingInteger {
  constructor(readonly text: string) {}
}

/** Exact texts of the integers that lost digits, by the object or array holding them and their key or index. */
const exactTexts = new WeakMap<object, Map<string | number, string>>();
/** The objects and arrays that hold such an integer at any depth. */
const holdsExact = new WeakSet<object>();

const SIXTEEN_DIGITS = /\d{16}/;
const INTEGER = /^-?\d{16,}$/;

/** `JSON.parse` for a client's text, remembering the integers that lost digits. Throws as `JSON.parse` does. */
export function parseClientJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (typeof value === 'object' && value !== null && SIXTEEN_DIGITS.test(text)) recordExactIntegers(text, value);
  return value;
}

/** lossless-json's number reader: a marker for an integer that loses digits, 0 for any other number (its value is not used; lossless-json takes null for no value). */
function readNumber(text: string): LosingInteger | 0 {
  if (!INTEGER.test(text)) return 0;
  const rounded = Number(text);
  // Past ±1.8e308 the number is Infinity, refused as such by variable coercion; the text is at most 309 digits here.
  if (!Number.isFinite(rounded) || BigInt(text) === BigInt(rounded)) return 0;
  return new LosingInteger(text);
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
      if (exactChild instanceof LosingInteger) {
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

/** The variables with exact ids put back, or the error refusing an integer that would reach a subgraph with other digits. */
export type ExactVariables = { readonly variables: Readonly<Record<string, unknown>> | undefined; readonly error?: undefined } | { readonly error: GraphQLError };

/**
 * Puts back the exact digits of `ID` values and refuses other non-`Float`
 * values that lost digits. The same object when nothing lost digits (the
 * common case costs one set lookup). Call after variable coercion, which
 * bounds how deep the values nest.
 */
export function exactVariables(schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[], variables: Readonly<Record<string, unknown>> | undefined): ExactVariables {
  if (variables === undefined || !holdsExact.has(variables)) return { variables };
  let out: Record<string, unknown> | undefined;
  for (const definition of definitions) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type || !Object.hasOwn(variables, name)) continue;
    const fixed = exactValue(variables[name], type, variables, name, { variable: name, at: [] });
    if (fixed instanceof GraphQLError) return { error: fixed };
    if (fixed !== variables[name]) setOwn((out ??= { ...variables }), name, fixed);
  }
  return { variables: out ?? variables };
}

interface Where {
  readonly variable: string;
  readonly at: readonly (string | number)[];
}

function exactValue(value: unknown, type: GraphQLInputType, holder: object, key: string | number, where: Where): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (typeof value === 'object' && value !== null) {
    if (!holdsExact.has(value)) return value;
    if (isListType(inner) && Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let index = 0; index < value.length; index += 1) {
        const fixed = exactValue(value[index], inner.ofType, value, index, { ...where, at: [...where.at, index] });
        if (fixed instanceof GraphQLError) return fixed;
        if (fixed !== value[index]) (out ??= value.slice())[index] = fixed;
      }
      return out ?? value;
    }
    if (isInputObjectType(inner) && !Array.isArray(value)) {
      let out: Record<string, unknown> | undefined;
      const object = value as Record<string, unknown>;
      for (const [field, definition] of Object.entries(inner.getFields())) {
        if (!Object.hasOwn(object, field)) continue;
        const fixed = exactValue(object[field], definition.type, object, field, { ...where, at: [...where.at, field] });
        if (fixed instanceof GraphQLError) return fixed;
        if (fixed !== object[field]) setOwn((out ??= { ...object }), field, fixed);
      }
      return out ?? value;
    }
    // An object or list a custom scalar takes as it is (a JSON scalar): nothing in it may lose digits.
    if (!isListType(inner) && !isInputObjectType(inner)) return losingDigits(where, firstExactText(value));
    return value;
  }
  const text = exactTexts.get(holder)?.get(key);
  if (text === undefined) return value;
  // A single value where a list is declared is coerced as a list of one: its item type decides.
  const named = getNamedType(inner);
  if (named.name === 'ID') return text;
  if (named.name === 'Float') return value;
  return losingDigits(where, text);
}

function losingDigits(where: Where, text: string): GraphQLError {
  const path = where.at.map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`)).join('');
  return new GraphQLError(
    `Variable "$${where.variable}" holds the integer ${text}${path === '' ? '' : ` (at $${where.variable}${path})`}, which a JSON number cannot carry exactly past 2^53: the router would pass on other digits. Send it as a string.`,
    { extensions: { code: 'BAD_USER_INPUT' } },
  );
}

/** The exact text of one integer that lost digits inside a value known to hold one. */
function firstExactText(value: object): string {
  const pending: object[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const texts = exactTexts.get(next);
    if (texts) for (const text of texts.values()) return text;
    for (const child of Object.values(next)) if (typeof child === 'object' && child !== null && holdsExact.has(child)) pending.push(child);
  }
  return 'beyond 2^53';
}
