import { GraphQLBoolean, GraphQLError, GraphQLID, GraphQLInt, GraphQLString, isEnumType, type GraphQLLeafType, type GraphQLSchema } from 'graphql';
import type { GraphQLErrorJSON } from '../errors.js';
import { childValues, firstValue, ownField, typenameOf, type JsonObject, type ResponseTree } from '../execute/response-tree.js';
import { setOwn } from '../own-property.js';
import type { NSelection } from '../plan/normalize.js';
import { assertSameResult, compiledChecks } from '../compiled-code.js';
import { CompiledShapes } from './compiled-shape.js';
import { ShapeFields, type ShapeField } from './shape-fields.js';

const MAX_INT = 2147483647;
const MIN_INT = -2147483648;

const BUBBLE = Symbol('null-bubble');
type Shaped = unknown | typeof BUBBLE;

/**
 * Builds the client's response from everything fetched: fields in the
 * client's order under its aliases, internal fields dropped, leaf values
 * checked against the schema, and nulls propagated per the GraphQL spec.
 * One instance per graph. An operation seen twice gets a compiled shaper
 * (compiled-shape.ts) for the common case; whatever it declines, this
 * general one shapes.
 */
export class ResponseShaper extends ShapeFields {
  private readonly compiled: CompiledShapes;

  /**
   * `schema` is the API schema answers are shaped to; `supergraph`, the
   * whole supergraph schema, tells which names a subgraph sends that
   * `@inaccessible` hides: errors about them do not name them.
   */
  constructor(
    schema: GraphQLSchema,
    private readonly supergraph: GraphQLSchema = schema,
  ) {
    super(schema);
    this.compiled = new CompiledShapes(this);
  }

  /** Whether `name` is a type the supergraph has and the API schema hides. */
  hidesType(name: string): boolean {
    return this.supergraph.getType(name) !== undefined && this.schema.getType(name) === undefined;
  }

  /** Whether `value` is a value of the supergraph's enum `enumName` that the API schema hides. */
  hidesEnumValue(enumName: string, value: unknown): boolean {
    const full = this.supergraph.getType(enumName);
    return typeof value === 'string' && isEnumType(full) && full.getValue(value) !== undefined;
  }

  shape(tree: ResponseTree, rootType: string, selections: readonly NSelection[], extraRoots: readonly JsonObject[], errors: GraphQLErrorJSON[]): Record<string, unknown> | null {
    if (extraRoots.length === 0) {
      const shaped = this.compiled.shape(tree, rootType, selections);
      if (shaped !== undefined) {
        if (compiledChecks.enabled) {
          const generalErrors: GraphQLErrorJSON[] = [];
          assertSameResult(
            'response shaper',
            { data: shaped, errors: [] },
            { data: this.shapeGeneral(tree, rootType, selections, extraRoots, generalErrors), errors: generalErrors },
          );
        }
        return shaped;
      }
    }
    return this.shapeGeneral(tree, rootType, selections, extraRoots, errors);
  }

  private shapeGeneral(
    tree: ResponseTree,
    rootType: string,
    selections: readonly NSelection[],
    extraRoots: readonly JsonObject[],
    errors: GraphQLErrorJSON[],
  ): Record<string, unknown> | null {
    const run = new ShapeRun(this, tree, errors);
    const view = tree.viewOf([...tree.roots, ...extraRoots]);
    const result = run.object(view, undefined, rootType, selections, []);
    return result === BUBBLE ? null : (result as Record<string, unknown>);
  }
}

/** Whether selections on `abstractType` ask which object type a value is: `__typename`, or a fragment on another type. */
function asksObjectType(selections: readonly NSelection[], abstractType: string): boolean {
  return selections.some((selection) =>
    selection.kind === 'Field' ? selection.name === '__typename' : selection.typeCondition !== abstractType || asksObjectType(selection.selections, abstractType),
  );
}

class ShapeRun {
  /** The errors' paths, indexed once a null needs checking against them. */
  private coverage: ErrorCoverage | undefined;

  constructor(
    private readonly shaper: ResponseShaper,
    private readonly tree: ResponseTree,
    private readonly errors: GraphQLErrorJSON[],
  ) {}

  /** Shapes one response object: from `view` (several fetches' objects), or from `only` when one fetch gave it all. */
  object(view: readonly JsonObject[] | undefined, only: JsonObject | undefined, runtimeType: string, selections: readonly NSelection[], path: Array<string | number>): Shaped {
    const out: Record<string, unknown> = {};
    const single = only ?? (view!.length === 1 ? view![0]! : undefined);
    for (const field of this.shaper.fields(selections, runtimeType)) {
      const key = field.responseKey;
      if (field.name === '__typename') {
        setOwn(out, key, runtimeType);
        continue;
      }
      if (field.verbatim) {
        setOwn(out, key, (single ? ownField(single, key) : childValues(view!, key)[0]) ?? null);
        continue;
      }
      path.push(key);
      // Most objects come from one fetch: read them directly, without collecting values.
      // Leaves need no merging: the first value any fetch gave is the value.
      const value = single
        ? this.value(ownField(single, key), undefined, field, 0, path)
        : field.leafType
          ? this.value(firstValue(view!, key), undefined, field, 0, path)
          : this.value(undefined, childValues(view!, key), field, 0, path);
      path.pop();
      if (value === BUBBLE) return BUBBLE;
      // A client may alias a field `__proto__`: an own key, never the prototype.
      setOwn(out, key, value);
    }
    return out;
  }

  /** Shapes one value: `many` holds it as several fetches gave it, else `single` is the one value. */
  private value(single: unknown, many: readonly unknown[] | undefined, field: ShapeField, depth: number, path: Array<string | number>): Shaped {
    let wrapper = field.wrappers[depth];
    const nonNull = wrapper === 'N';
    if (nonNull) wrapper = field.wrappers[depth + 1];
    const next = nonNull ? depth + 1 : depth;
    const first = many ? many[0] : single;
    if (first === undefined || first === null) return this.nullValue(nonNull, field, path);
    let result: Shaped;
    if (wrapper === 'L') result = this.list(first, many, field, next + 1, path);
    else if (field.leafType) result = this.leaf(first, field.leafType, path);
    else result = this.composite(first, many, field, path);
    if (result === BUBBLE || result === null) return this.nullValue(nonNull, field, path, result === BUBBLE);
    return result;
  }

  private list(first: unknown, many: readonly unknown[] | undefined, field: ShapeField, depth: number, path: Array<string | number>): Shaped {
    if (!Array.isArray(first)) {
      this.error(`Expected a list for field "${field.parentType}.${field.name}".`, path);
      return null;
    }
    const arrays = many && many.length > 1 ? (many.filter(Array.isArray) as unknown[][]) : undefined;
    const length = first.length;
    const out = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
      path.push(i);
      const shaped = arrays
        ? this.value(
            undefined,
            arrays.map((a) => a[i]).filter((v) => v !== undefined),
            field,
            depth,
            path,
          )
        : this.value(first[i], undefined, field, depth, path);
      path.pop();
      if (shaped === BUBBLE) return BUBBLE;
      out[i] = shaped;
    }
    return out;
  }

  private composite(first: unknown, many: readonly unknown[] | undefined, field: ShapeField, path: Array<string | number>): Shaped {
    if (!field.selections) return null;
    let view: readonly JsonObject[] | undefined;
    let only: JsonObject | undefined;
    if (many && many.length > 1) view = this.tree.viewOf(many);
    else if (typeof first !== 'object' || first === null || Array.isArray(first)) return this.notAnObject(field, path);
    else {
      const extras = this.tree.extrasOf(first as JsonObject);
      if (extras.length === 0) only = first as JsonObject;
      else view = [first as JsonObject, ...extras];
    }
    if (view && view.length === 0) return null;
    let runtimeType = field.namedType?.name ?? '';
    if (field.abstract) {
      const all = view ?? [only!];
      let typename = typenameOf(all.filter((o) => typeof o.__typename === 'string' && this.shaper.objectType(o.__typename as string)));
      // Only interface objects answered: all that is known is the interface itself. That serves the interface's own
      // fields; asked which object it is (__typename, a fragment on an object type), the planner asked the
      // interface's owner, and an owner that knows no such object leaves it unresolvable: null, as Apollo Gateway answers.
      if (typename === undefined && typenameOf(all) === runtimeType) {
        if (asksObjectType(field.selections, runtimeType)) {
          this.error(`Abstract type "${runtimeType}" could not be resolved to an object type: the subgraph that owns it does not know this object.`, path);
          return null;
        }
        typename = runtimeType;
      }
      if (typename === undefined || !this.shaper.satisfies(typename, runtimeType)) {
        const sent = typename ?? typenameOf(all) ?? '';
        const named = this.shaper.hidesType(sent) ? '' : ` "${sent}"`;
        this.error(`Abstract type "${runtimeType}" was resolved to a type${named} that does not exist inside the schema.`, path);
        return null;
      }
      runtimeType = typename;
    }
    return this.object(view, only, runtimeType, field.selections, path);
  }

  /** A subgraph sent a scalar or a list where the schema has an object: say so rather than null it silently. */
  private notAnObject(field: ShapeField, path: ReadonlyArray<string | number>): null {
    this.error(`Expected an object for field "${field.parentType}.${field.name}".`, path);
    return null;
  }

  private leaf(value: unknown, type: GraphQLLeafType, path: Array<string | number>): Shaped {
    // Strings, booleans and whole numbers are by far the most common values; skip serialize for them.
    if (type === GraphQLString || type === GraphQLID) {
      if (typeof value === 'string') return value;
    } else if (type === GraphQLBoolean) {
      if (typeof value === 'boolean') return value;
    } else if (type === GraphQLInt) {
      if (typeof value === 'number' && Number.isInteger(value) && value <= MAX_INT && value >= MIN_INT) return value;
    }
    try {
      const serialized: unknown = type.serialize(value);
      if (serialized === undefined) throw new GraphQLError(`${type.name} cannot represent value: ${JSON.stringify(value)}`);
      return serialized;
    } catch (error) {
      const message = !isEnumType(type)
        ? (error as Error).message
        : this.shaper.hidesEnumValue(type.name, value)
          ? `Enum "${type.name}" cannot represent a value that is not part of the schema.`
          : `Enum "${type.name}" cannot represent value: ${JSON.stringify(value)}`;
      this.error(message, path);
      return null;
    }
  }

  private nullValue(nonNull: boolean, field: ShapeField, path: Array<string | number>, alreadyReported = false): Shaped {
    if (!nonNull) return null;
    if (!alreadyReported && !this.hasErrorAt(path)) {
      this.error(`Cannot return null for non-nullable field ${field.parentType}.${field.name}.`, path);
    }
    return BUBBLE;
  }

  /** Whether an error already covers this path or a position inside or above it. */
  private hasErrorAt(path: ReadonlyArray<string | number>): boolean {
    return (this.coverage ??= new ErrorCoverage(this.errors)).covers(path);
  }

  private error(message: string, path: ReadonlyArray<string | number>): void {
    this.errors.push({ message, path: [...path] });
  }
}

/**
 * Which response paths the errors so far cover (their own paths, every
 * position inside them, every position above them), answered in time linear
 * in the path's depth: a response may hold one error per position of a long
 * list and a null per position too. Errors added later are indexed as asked.
 */
class ErrorCoverage {
  /** Keys of the errors' own paths. */
  private readonly exact = new Set<string>();
  /** Keys of every prefix of the errors' paths (their own included). */
  private readonly prefixes = new Set<string>();
  private indexed = 0;

  constructor(private readonly errors: readonly GraphQLErrorJSON[]) {}

  covers(path: ReadonlyArray<string | number>): boolean {
    this.catchUp();
    let key = '';
    if (this.exact.has(key)) return true;
    for (const segment of path) {
      key += segmentKey(segment);
      if (this.exact.has(key)) return true;
    }
    return this.prefixes.has(key);
  }

  private catchUp(): void {
    for (; this.indexed < this.errors.length; this.indexed++) {
      const path = this.errors[this.indexed]!.path;
      if (!Array.isArray(path)) continue;
      let key = '';
      this.prefixes.add(key);
      for (const segment of path) {
        key += segmentKey(segment as string | number);
        this.prefixes.add(key);
      }
      this.exact.add(key);
    }
  }
}

/** A path segment in a key: list indices and names kept apart (`1` is not `"1"`). */
function segmentKey(segment: string | number): string {
  return typeof segment === 'number' ? `\u0001${segment}` : `\u0002${segment}`;
}
