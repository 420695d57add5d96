/**
 * Compiled response shaping: for an operation seen more than once, the
 * shaper is generated as JavaScript (shape-codegen.ts) and built with
 * `new Function`. Field reads become property loads the engine can
 * specialize, and each response object one object literal, so the common
 * case costs a fraction of the general shaper. Whatever the compiled code
 * declines (an error of any kind, values merged from several fetches, an
 * interface object, introspection) it answers with BAIL, and the general
 * shaper shapes the whole response: answers are the same either way.
 */
import { isObjectType, type GraphQLLeafType } from 'graphql';
import type { JsonObject, ResponseTree } from '../execute/response-tree.js';
import type { NSelection } from '../plan/normalize.js';
import { compileGenerated } from '../code-generation.js';
import { CompiledCache } from '../compiled-code.js';
import { MULTI } from '../execute/object-parts.js';
import { generateShapeSource, type ShapeFacts } from './shape-codegen.js';

const BAIL = Symbol('compiled-shape-bail');

type Extras = ReadonlyMap<JsonObject, readonly JsonObject[]>;
type ObjectShaper = (object: JsonObject, more: readonly JsonObject[] | undefined, extras: Extras) => Record<string, unknown> | typeof BAIL;

/** The compiled shapers of one graph's operations, by the operation's selection set (they live as long as its plan). */
export class CompiledShapes {
  private readonly shapers: CompiledCache<readonly NSelection[], string, ObjectShaper>;

  constructor(facts: ShapeFacts) {
    const objectTypes = new Set(
      Object.values(facts.schema.getTypeMap())
        .filter(isObjectType)
        .map((type) => type.name),
    );
    const helpers: Omit<ShapeHelpers, 'L'> = {
      BAIL,
      MULTI,
      runtimeTypeOf: (object: JsonObject, more: readonly JsonObject[] | undefined) => runtimeTypeOf(objectTypes, object, more),
    };
    this.shapers = new CompiledCache((selections, rootType) => {
      const source = generateShapeSource(facts, rootType, selections);
      return source && compileGenerated<ShapeHelpers, ObjectShaper>(source.body, { ...helpers, L: source.leafTypes.map(leafSerializer) });
    });
  }

  /** The shaped data, or undefined when the general shaper must do it (not compiled yet, or declined). */
  shape(tree: ResponseTree, rootType: string, selections: readonly NSelection[]): Record<string, unknown> | undefined {
    const shaper = this.shapers.get(selections, rootType);
    if (!shaper) return undefined;
    const view = tree.viewOf(tree.roots);
    if (view.length === 0) return undefined;
    const shaped = shaper(view[0]!, view.length > 1 ? view.slice(1) : undefined, tree.extrasMap());
    return shaped === BAIL ? undefined : shaped;
  }
}

/** What the generated code receives as `H`. */
interface ShapeHelpers {
  readonly BAIL: typeof BAIL;
  readonly MULTI: typeof MULTI;
  readonly runtimeTypeOf: (object: JsonObject, more: readonly JsonObject[] | undefined) => string | undefined;
  readonly L: ReadonlyArray<(value: unknown) => unknown>;
}

/** A leaf value as `serialize` gives it, or BAIL where the general shaper reports an error. */
function leafSerializer(type: GraphQLLeafType): (value: unknown) => unknown {
  return function serializeLeaf(value: unknown): unknown {
    try {
      const serialized = type.serialize(value);
      return serialized === undefined ? BAIL : serialized;
    } catch {
      return BAIL;
    }
  };
}

/** The first object type any part reports as `__typename` (what the general shaper resolves abstract types by). */
function runtimeTypeOf(objectTypes: ReadonlySet<string>, object: JsonObject, more: readonly JsonObject[] | undefined): string | undefined {
  const own = object.__typename;
  if (typeof own === 'string' && objectTypes.has(own)) return own;
  if (more === undefined) return undefined;
  for (let i = 0; i < more.length; i++) {
    const name = more[i]!.__typename;
    if (typeof name === 'string' && objectTypes.has(name)) return name;
  }
  return undefined;
}
