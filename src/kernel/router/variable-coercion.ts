/**
 * Variable values, from the client's JSON to the values execution uses.
 * graphql-js coerces input values recursively: a value nested a few hundred
 * levels deep (a recursive input type, `input I { b: [I!] }`) overflows the
 * stack, and `getVariableValues` hands the `RangeError` back among its
 * errors. So the values the operation declares are first held to the
 * nesting bound documents have (MAX_NESTING), by a scan with an explicit
 * stack; whatever else coercion reports that is not a GraphQL error is still
 * the client's input, so a 400 too.
 */
import { getVariableValues, GraphQLError, Kind, valueFromASTUntyped, type GraphQLSchema, type ValueNode, type VariableDefinitionNode } from 'graphql';
import { RouterError } from '../errors.js';
import { setOwn } from '../own-property.js';
import { MAX_NESTING } from './document-scan.js';
import { isStackOverflow } from './request-limits.js';

/** Variables coerced to their declared types, or the errors that refuse the request (code `BAD_USER_INPUT`). */
export type CoercedVariables = { readonly coerced: Record<string, unknown>; readonly errors?: undefined } | { readonly errors: readonly GraphQLError[] };

/**
 * Coerces the variables `definitions` declare. Throws a 400 `RouterError`
 * (`BAD_USER_INPUT`) when a declared variable's value nests lists and
 * objects deeper than MAX_NESTING; undeclared variables are ignored, as
 * coercion ignores them.
 */
export function coerceVariables(schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[], variables: Readonly<Record<string, unknown>> | undefined): CoercedVariables {
  const inputs: Record<string, unknown> = { ...variables };
  for (const definition of definitions) {
    const name = definition.variable.name.value;
    if (!Object.hasOwn(inputs, name)) continue;
    const problem = valueProblem(inputs[name], MAX_NESTING);
    if (problem === 'too deep') throw variableTooDeep(name);
    // JSON reads a number past ±1.8e308 (1e400) as Infinity, which it then writes as null: the subgraph would get null.
    if (problem === 'not finite')
      return { errors: [new GraphQLError(`Variable "$${name}" holds a number too large for JSON to carry (beyond ±1.8e308).`, { extensions: { code: 'BAD_USER_INPUT' } })] };
  }
  const result = getVariableValues(schema, definitions, inputs, { maxErrors: 50 });
  if (!result.errors) return { coerced: result.coerced };
  const errors: GraphQLError[] = [];
  for (const error of result.errors as readonly unknown[]) {
    if (error instanceof GraphQLError) errors.push(error);
    // The scan makes this unreachable for JSON values; kept for values code passes to `router.execute`.
    else if (isStackOverflow(error)) throw variableTooDeep(undefined);
    else errors.push(new GraphQLError(`Variables could not be coerced: ${error instanceof Error ? error.message : String(error)}`, { extensions: { code: 'BAD_USER_INPUT' } }));
  }
  return { errors };
}

/**
 * What is wrong with a variable's value, if anything: arrays and objects
 * nested more than `bound` levels deep (`{}` and `[]` are one level), or a
 * number that is not finite. One walk with an explicit stack, reading each
 * value once (a value from code may have getters): linear in the size of a
 * value parsed from JSON (a tree), and it stops at the first path past the
 * bound (so a cyclic value from code ends too).
 */
function valueProblem(value: unknown, bound: number): 'too deep' | 'not finite' | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'not finite';
  if (typeof value !== 'object' || value === null) return undefined;
  let problem: 'not finite' | undefined;
  const values: object[] = [value];
  const depths: number[] = [1];
  for (let next = values.pop(); next !== undefined; next = values.pop()) {
    const depth = depths.pop()!;
    if (depth > bound) return 'too deep';
    const children: unknown[] = Array.isArray(next) ? next : Object.values(next);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      } else if (typeof child === 'number' && !Number.isFinite(child)) problem = 'not finite';
    }
  }
  return problem;
}

function variableTooDeep(name: string | undefined): RouterError {
  const subject = name === undefined ? 'A variable' : `Variable "$${name}"`;
  return new RouterError('BAD_USER_INPUT', `${subject} nests lists and objects more than ${MAX_NESTING} levels deep; the router accepts at most ${MAX_NESTING}.`, {
    status: 400,
  });
}

/**
 * The client's variables with the operation's default values written in for
 * those it did not send (an explicit `null` stays `null`, as GraphQL says).
 * Subgraph operations declare the same defaults, so their answers do not
 * change; what changes is that every value a subgraph call depends on is in
 * its variables, where caches and in-flight sharing key on them (two
 * operations differing only by a default are different calls). The client's
 * object itself when there is nothing to add.
 */
export function withDefaultValues(
  definitions: readonly VariableDefinitionNode[] | undefined,
  variables: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> {
  const given = variables ?? {};
  let filled: Record<string, unknown> | undefined;
  for (const definition of definitions ?? []) {
    const name = definition.variable.name.value;
    if (definition.defaultValue === undefined || Object.hasOwn(given, name) || !jsonCarriesExactly(definition.defaultValue)) continue;
    filled ??= { ...given };
    setOwn(filled, name, valueFromASTUntyped(definition.defaultValue));
  }
  return filled ?? given;
}

/**
 * Whether a default's JSON value says exactly what its literal says: a number
 * JSON would round (an ID or a custom scalar such as a Long written as
 * 12345678901234567890, a Decimal's extra digits) is left to the subgraph,
 * which reads the literal from the operation it declares.
 */
function jsonCarriesExactly(value: ValueNode): boolean {
  switch (value.kind) {
    case Kind.INT:
    case Kind.FLOAT:
      return String(Number(value.value)) === value.value;
    case Kind.LIST:
      return value.values.every(jsonCarriesExactly);
    case Kind.OBJECT:
      return value.fields.every((field) => jsonCarriesExactly(field.value));
    default:
      return true;
  }
}
